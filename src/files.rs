//! Writing files the user owns: atomically, so a reader sees the old file or the new one and
//! never half of it.

use std::io::Write;
use std::path::Path;

/// Replaces `path` with `content` atomically: a reader sees the old file or the new one,
/// never half of it. The original permissions are kept.
pub fn write_atomically(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let metadata = std::fs::metadata(path).ok();
    replace_through_temporary(path, content, |temporary| match &metadata {
        Some(metadata) => std::fs::set_permissions(temporary, metadata.permissions()),
        None => Ok(()),
    })
}

/// Writes `content` to a temporary file beside `path`, lets `prepare` give it what the old
/// file had (permissions, owner), then renames it over `path`. The temporary is removed when
/// any step fails.
fn replace_through_temporary(
    path: &Path,
    content: &[u8],
    prepare: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = dir.join(format!(".{name}.retrylint-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(content)?;
        file.sync_all()?;
        prepare(&temporary)?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// What [`write_fix`] did with a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    Written,
    /// Left as it is, for this reason (a note).
    Skipped(String),
}

/// Writes `fixed` over `path`, whose text was `original` when it was analysed. The file is
/// read again first and left alone when it changed since (an editor saved it meanwhile), or
/// when it is not a regular file (a symbolic link is never followed or replaced). A file with
/// hard links is written in place, through the same inode, so every link sees the fix; any
/// other file is replaced atomically with its permissions and ownership. The test hook
/// `RETRYLINT_TEST_EDIT_BEFORE_WRITE=<file name>` edits that file just before it is read again,
/// `RETRYLINT_TEST_FAIL_WRITE=<file name>` makes its write fail.
pub fn write_fix(path: &Path, original: &[u8], fixed: &[u8]) -> std::io::Result<Written> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Written::Skipped(
                "not fixed: the file was removed since it was read".into(),
            ))
        }
        Err(e) => return Err(e),
    };
    if !metadata.file_type().is_file() {
        return Ok(Written::Skipped(
            "not fixed: not a regular file (a symbolic link is never written through)".into(),
        ));
    }
    if let Some(name) = std::env::var_os("RETRYLINT_TEST_EDIT_BEFORE_WRITE") {
        if path.file_name() == Some(name.as_os_str()) {
            let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
            file.write_all(b"\n// edited while retrylint ran\n")?;
        }
    }
    if std::env::var_os("RETRYLINT_TEST_FAIL_WRITE").is_some_and(|name| path.file_name() == Some(name.as_os_str())) {
        return Err(std::io::Error::other("RETRYLINT_TEST_FAIL_WRITE"));
    }
    if std::fs::read(path)? != original {
        return Ok(Written::Skipped(
            "not fixed: the file changed since it was read; run --fix again".into(),
        ));
    }
    if hard_links(&metadata) > 1 {
        write_in_place(path, fixed)?;
        return Ok(Written::Written);
    }
    match write_atomically_owned(path, fixed, &metadata) {
        Ok(()) => {}
        // The owner cannot be kept on a new file (another user's file in a shared directory):
        // write through the same inode instead.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => write_in_place(path, fixed)?,
        Err(e) => return Err(e),
    }
    Ok(Written::Written)
}

#[cfg(unix)]
fn hard_links(metadata: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(metadata)
}

#[cfg(not(unix))]
fn hard_links(_: &std::fs::Metadata) -> u64 {
    1
}

/// Truncates and writes `path` through its own inode (links, owner and mode stay).
fn write_in_place(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
    file.write_all(content)?;
    file.sync_all()
}

/// [`write_atomically`], giving the new file the old one's owner and group too.
fn write_atomically_owned(path: &Path, content: &[u8], metadata: &std::fs::Metadata) -> std::io::Result<()> {
    replace_through_temporary(path, content, |temporary| {
        std::fs::set_permissions(temporary, metadata.permissions())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let new = std::fs::metadata(temporary)?;
            if new.uid() != metadata.uid() || new.gid() != metadata.gid() {
                std::os::unix::fs::chown(temporary, Some(metadata.uid()), Some(metadata.gid()))?;
            }
        }
        Ok(())
    })
}

/// A config larger than this is not a config (`--config /dev/zero`, a misnamed dump).
pub const MAX_CONFIG_SIZE: u64 = 1024 * 1024;

/// Reads at most `limit` bytes of UTF-8 from `path` (a FIFO or device too): more is an error.
pub fn read_bounded(path: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(std::io::Error::other(format!("over the size limit of {limit} bytes")));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_skips_a_removed_or_edited_file_and_keeps_hard_links() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.ts");
        assert!(matches!(write_fix(&path, b"old", b"new"), Ok(Written::Skipped(_))));
        std::fs::write(&path, "edited").unwrap();
        assert!(matches!(write_fix(&path, b"old", b"new"), Ok(Written::Skipped(_))));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "edited");
        std::fs::write(&path, "old").unwrap();
        std::fs::hard_link(&path, dir.path().join("b.ts")).unwrap();
        assert_eq!(write_fix(&path, b"old", b"new").unwrap(), Written::Written);
        assert_eq!(std::fs::read_to_string(dir.path().join("b.ts")).unwrap(), "new");
    }

    #[test]
    fn writes_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.ts");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left behind"
        );
    }
}
