//! Reading and writing files. Every file retrylint reads goes through [`read_file`] (or
//! [`read_inside`], for a file that must stay inside the project): a regular file, opened
//! without blocking, read up to a size bound. Files the user owns are written atomically, so a
//! reader sees the old file or the new one and never half of it.

use std::io::Write;
use std::path::{Path, PathBuf};

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
    let temporary = temporary_beside(path);
    let result = write_temporary(&temporary, content, prepare).and_then(|_| std::fs::rename(&temporary, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// Replaces `path` atomically with what `write` writes, streamed through a buffer: a reader
/// sees the old file or the new one, never half of it, and the content is never held in
/// memory whole (the facts cache of a large monorepo).
pub fn write_atomically_streamed(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let temporary = temporary_beside(path);
    let result = (|| {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&temporary)?);
        write(&mut out)?;
        let file = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// Where a replacement of `path` is written first: beside it, on the same file system.
fn temporary_beside(path: &Path) -> std::path::PathBuf {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    dir.join(format!(".{name}.retrylint-{}.tmp", std::process::id()))
}

/// Writes `content` to `temporary`, durably, and lets `prepare` finish it; which file it is.
fn write_temporary(
    temporary: &Path,
    content: &[u8],
    prepare: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<Option<(u64, u64)>> {
    let mut file = std::fs::File::create(temporary)?;
    file.write_all(content)?;
    file.sync_all()?;
    prepare(temporary)?;
    Ok(identity(&file.metadata()?))
}

/// What [`write_fix`] did with a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    Written,
    /// Left as it is, for this reason (a note).
    Skipped(String),
}

/// Writes `fixed` over `path`, whose text was `original` when it was analysed, unless the
/// file changed since (an editor saved it meanwhile) or is not a regular file (a symbolic link
/// is never followed or replaced). A file with hard links is written in place, through the
/// same inode, so every link sees the fix; any other file is replaced atomically with its
/// permissions and ownership.
///
/// Compare and swap, as far as a file system allows without locks (which editors do not take).
/// The file is opened once and held; the fix is written to a temporary beside it; right
/// before the fix goes into place, the path must still name the held file, with the size,
/// modification time and bytes that were analysed. On Linux the fix is then swapped into
/// place (`renameat2` with `RENAME_EXCHANGE`), which hands back the file it displaced: when
/// that is not the held file, or the held file changed after the last check, it is swapped
/// back. Elsewhere (or on a file system without the swap) the fix is renamed into place and a
/// change the held file took after the last check is put back the same way. Either way the
/// fix is then skipped with a note, and the user's edit is at the path.
///
/// So an edit is never lost that is saved (in place, appended, or by an editor's rename)
/// before the fix is in place and its displaced file checked — a window of a few system
/// calls. What no tool can see without locks: a writer that opened the file before and writes
/// to it after that writes to a file no longer at the path, as after any editor's or
/// formatter's save by rename. A file with hard links is written in place after the same last
/// check: an edit between that check and the write is lost.
///
/// Test hooks: `RETRYLINT_TEST_EDIT_BEFORE_WRITE=<file name>` edits that file just before it
/// is read again, `RETRYLINT_TEST_EDIT_BEFORE_RENAME=<file name>` just after the last check,
/// `RETRYLINT_TEST_FAIL_WRITE=<file name>` makes its write fail, and
/// `RETRYLINT_TEST_PLAIN_RENAME=1` renames instead of swapping.
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
    if test_hook("RETRYLINT_TEST_EDIT_BEFORE_WRITE", path) {
        append_for_test(path)?;
    }
    if test_hook("RETRYLINT_TEST_FAIL_WRITE", path) {
        return Err(std::io::Error::other("RETRYLINT_TEST_FAIL_WRITE"));
    }
    let changed = || Written::Skipped("not fixed: the file changed since it was read; run --fix again".into());
    let held = match open_held(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(changed()),
        Err(e) => return Err(e),
    };
    let opened = held.metadata()?;
    let seen = Seen::of(&opened);
    if !opened.is_file() || !seen.unchanged(path, &held, original)? {
        return Ok(changed());
    }
    if hard_links(&metadata) > 1 {
        write_in_place(path, fixed)?;
        return Ok(Written::Written);
    }
    match replace_checked(path, fixed, &metadata, &held, &seen, original) {
        Ok(written) => Ok(written),
        // The owner cannot be kept on a new file (another user's file in a shared directory):
        // write through the same inode instead, after the same last check.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            if !seen.unchanged(path, &held, original)? {
                return Ok(changed());
            }
            write_in_place(path, fixed)?;
            Ok(Written::Written)
        }
        Err(e) => Err(e),
    }
}

/// Opens `path` for reading without blocking on a FIFO swapped in since it was a regular file.
fn open_held(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Never waits for a FIFO's writer, never takes a terminal, never follows a link that
    // took the file's place since it was checked.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW);
    options.open(path)
}

fn test_hook(name: &str, path: &Path) -> bool {
    std::env::var_os(name).is_some_and(|file| path.file_name() == Some(file.as_os_str()))
}

fn append_for_test(path: &Path) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(b"\n// edited while retrylint ran\n")
}

/// A file as it was checked: which file it is, its size and modification time.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    identity: Option<(u64, u64)>,
    size: u64,
    modified: Option<std::time::SystemTime>,
}

impl Seen {
    fn of(metadata: &std::fs::Metadata) -> Seen {
        Seen {
            identity: identity(metadata),
            size: metadata.len(),
            modified: metadata.modified().ok(),
        }
    }

    /// Whether `path` still names `held`, and `held` is as seen, with `original`'s bytes.
    fn unchanged(&self, path: &Path, held: &std::fs::File, original: &[u8]) -> std::io::Result<bool> {
        match std::fs::symlink_metadata(path) {
            Ok(at_path) if at_path.file_type().is_file() && identity(&at_path) == self.identity => {}
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        }
        self.holds(held, original)
    }

    /// Whether `held` is as seen, with `original`'s bytes (read again: an edit of the same
    /// size within the clock's granularity keeps the time).
    fn holds(&self, held: &std::fs::File, original: &[u8]) -> std::io::Result<bool> {
        use std::io::{Read, Seek};
        if Seen::of(&held.metadata()?) != *self {
            return Ok(false);
        }
        let mut reader = held;
        reader.seek(std::io::SeekFrom::Start(0))?;
        let mut bytes = Vec::with_capacity(original.len());
        reader.take(original.len() as u64 + 1).read_to_end(&mut bytes)?;
        Ok(bytes == original)
    }
}

#[cfg(unix)]
fn identity(metadata: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Puts `content` in place of `path` (see [`write_fix`]): through a temporary with the old
/// file's permissions and owner, after a last check that `path` is still `held` as `seen`,
/// by a swap (or a rename), and with the displaced file checked once more.
fn replace_checked(
    path: &Path,
    content: &[u8],
    metadata: &std::fs::Metadata,
    held: &std::fs::File,
    seen: &Seen,
    original: &[u8],
) -> std::io::Result<Written> {
    let raced = || {
        Written::Skipped(
            "not fixed: the file changed while the fix was written; it is left as it was; run --fix again".into(),
        )
    };
    let temporary = temporary_beside(path);
    // Whether the temporary's name holds the user's file (a swap that could not be undone).
    let mut keep = false;
    let result = (|| {
        let ours = write_temporary(&temporary, content, |temporary| keep_owner(temporary, metadata))?;
        if !seen.unchanged(path, held, original)? {
            return Ok(Written::Skipped(
                "not fixed: the file changed since it was read; run --fix again".into(),
            ));
        }
        if test_hook("RETRYLINT_TEST_EDIT_BEFORE_RENAME", path) {
            append_for_test(path)?;
        }
        if std::env::var_os("RETRYLINT_TEST_PLAIN_RENAME").is_none() {
            match exchange(&temporary, path) {
                Ok(()) => {
                    // The temporary's name now holds what was at the path: unless that is surely
                    // the file checked, untouched, it is swapped back.
                    let displaced = std::fs::symlink_metadata(&temporary).ok();
                    let checked = displaced.is_some_and(|d| identity(&d) == seen.identity);
                    if checked && seen.holds(held, original).unwrap_or(false) {
                        // The original text, as analysed: removed below.
                        return Ok(Written::Written);
                    }
                    // Another version was displaced: swap it back.
                    if let Err(e) = exchange(&temporary, path) {
                        keep = true;
                        return Err(std::io::Error::new(
                            e.kind(),
                            format!(
                                "the file changed as the fix went in and could not be put back ({e}): the changed version is {}",
                                temporary.display()
                            ),
                        ));
                    }
                    return Ok(raced());
                }
                Err(e) if swap_unsupported(&e) => {}
                Err(e) => return Err(e),
            }
        }
        std::fs::rename(&temporary, path)?;
        if seen.holds(held, original)? {
            return Ok(Written::Written);
        }
        // A write reached the old file after the last check: put it back, unless the path
        // was replaced once more since (that version stands).
        let at_path = std::fs::symlink_metadata(path)?;
        if identity(&at_path) == ours {
            use std::io::{Read, Seek};
            let mut reader = held;
            reader.seek(std::io::SeekFrom::Start(0))?;
            let mut theirs = Vec::new();
            reader.read_to_end(&mut theirs)?;
            replace_through_temporary(path, &theirs, |temporary| keep_owner(temporary, metadata))?;
        }
        Ok(raced())
    })();
    if !keep && std::fs::symlink_metadata(&temporary).is_ok() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// Gives `temporary` the permissions, owner and group of the file it replaces.
fn keep_owner(temporary: &Path, metadata: &std::fs::Metadata) -> std::io::Result<()> {
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
}

/// Swaps the files at `a` and `b`, atomically.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both are NUL-terminated paths that live across the call; renameat2 reads them
    // and keeps no pointer.
    let done = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// The kernel or the file system has no atomic swap: rename instead.
fn swap_unsupported(e: &std::io::Error) -> bool {
    #[cfg(target_os = "linux")]
    if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)) {
        return true;
    }
    e.kind() == std::io::ErrorKind::Unsupported
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

/// A config, manifest or tsconfig larger than this is not one (`--config /dev/zero`, a
/// misnamed dump): retrylint.toml, package.json, tsconfig.json, wrangler, workspace files and
/// ignore files are held to it.
pub const MAX_CONFIG_SIZE: u64 = 1024 * 1024;
/// Lockfiles of large monorepos run to tens of megabytes; a baseline of many findings too.
pub const MAX_LOCKFILE_SIZE: u64 = 64 * 1024 * 1024;
pub const MAX_BASELINE_SIZE: u64 = 64 * 1024 * 1024;

/// Why a file was not read. Its message never holds the file's text.
#[derive(Debug)]
pub enum ReadError {
    /// Missing, unreadable, a dangling link…
    Io(std::io::Error),
    /// A FIFO, a device, a socket, a directory (or, where links are not followed, a link).
    NotRegular(&'static str),
    TooLarge {
        limit: u64,
    },
    /// The file (or what a link leads to) is outside the directory it must stay in.
    Outside(PathBuf),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotRegular(what) => write!(f, "not a regular file ({what})"),
            ReadError::TooLarge { limit } => write!(f, "over the size limit of {limit} bytes"),
            ReadError::Outside(dir) => write!(f, "it leads outside the project ({})", dir.display()),
        }
    }
}

impl ReadError {
    /// Nothing is there: for optional files (a package without a tsconfig), not worth a word.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// What a file type is, in a note's words, when it is not a regular file.
pub fn kind_of(file_type: std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        return None;
    }
    if file_type.is_dir() {
        return Some("a directory");
    }
    if file_type.is_symlink() {
        return Some("a symbolic link");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return Some("a FIFO");
        }
        if file_type.is_char_device() {
            return Some("a character device");
        }
        if file_type.is_block_device() {
            return Some("a block device");
        }
        if file_type.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file")
}

/// Opens `path` for reading if it is a regular file of at most `limit` bytes, without ever
/// blocking: the open does not wait for a FIFO's writer (`O_NONBLOCK`) and the handle's type
/// and size are checked before anything is read. With `follow` (a path the user named), links
/// are followed and the type is checked before the open too, so a device is never opened;
/// without, a symbolic link is refused (`O_NOFOLLOW`): the paths a walk or a resolution found.
pub fn open_regular(path: &Path, limit: u64, follow: bool) -> Result<std::fs::File, ReadError> {
    open_checked(path, limit, follow).map(|(file, _)| file)
}

fn open_checked(path: &Path, limit: u64, follow: bool) -> Result<(std::fs::File, u64), ReadError> {
    let regular = |metadata: &std::fs::Metadata| match kind_of(metadata.file_type()) {
        Some(what) => Err(ReadError::NotRegular(what)),
        None if metadata.len() > limit => Err(ReadError::TooLarge { limit }),
        None => Ok(metadata.len()),
    };
    if follow {
        regular(&std::fs::metadata(path)?)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | no_follow);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        // `O_NOFOLLOW` on a link.
        #[cfg(unix)]
        Err(e) if !follow && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(ReadError::NotRegular("a symbolic link"))
        }
        Err(e) => return Err(e.into()),
    };
    let size = regular(&file.metadata()?)?;
    Ok((file, size))
}

/// The bytes of the regular file at `path`, at most `limit` of them: more (a file that grew,
/// a `/proc` file that reports no size) is [`ReadError::TooLarge`]. Links are followed when
/// `follow`; see [`open_regular`].
pub fn read_file(path: &Path, limit: u64, follow: bool) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let (file, size) = open_checked(path, limit, follow)?;
    // Room for the whole file and one byte more: one read, and one that finds the end.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// [`read_file`] of a file that must lie inside `boundary` (canonical), links and `..`
/// resolved: a project's own files, never what a link or a path in them points to elsewhere.
pub fn read_inside(path: &Path, limit: u64, boundary: &Path) -> Result<Vec<u8>, ReadError> {
    let canonical = inside(path, boundary)?;
    read_file(&canonical, limit, false)
}

/// `path` with links and `..` resolved, if that lies inside `boundary` (canonical).
pub fn inside(path: &Path, boundary: &Path) -> Result<PathBuf, ReadError> {
    // Most files looked for are not there (a package.json in every directory upwards): one
    // `lstat` says so before a component-by-component resolution.
    std::fs::symlink_metadata(path)?;
    let canonical = std::fs::canonicalize(path)?;
    if !canonical.starts_with(boundary) {
        return Err(ReadError::Outside(boundary.to_path_buf()));
    }
    Ok(canonical)
}

/// [`read_file`] as UTF-8 text.
pub fn read_text(path: &Path, limit: u64, follow: bool) -> Result<String, ReadError> {
    utf8(read_file(path, limit, follow)?)
}

/// [`read_inside`] as UTF-8 text.
pub fn read_text_inside(path: &Path, limit: u64, boundary: &Path) -> Result<String, ReadError> {
    utf8(read_inside(path, limit, boundary)?)
}

fn utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes)
        .map_err(|_| ReadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8")))
}

/// `path` made absolute as the user named it: its directory is resolved (links, `..`), but a
/// path that is itself a symbolic link stays the link, not what it points to. A path that
/// does not exist (not even as a dangling link) is an error.
pub fn as_given(path: &Path) -> std::io::Result<PathBuf> {
    let metadata = std::fs::symlink_metadata(path)?;
    match (metadata.file_type().is_symlink(), path.file_name()) {
        (true, Some(name)) => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Ok(std::fs::canonicalize(parent)?.join(name))
        }
        _ => std::fs::canonicalize(path),
    }
}

/// The nearest directory at or above `dir` holding `.git` (a work tree's root).
pub fn git_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

/// What a project may read besides the files it checks (tsconfig `extends`, package.json of
/// workspace packages, lockfiles, ignore files): its git root, else its root (canonical).
pub fn boundary(root: &Path) -> PathBuf {
    git_root(root).unwrap_or(root).to_path_buf()
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

    #[cfg(unix)]
    #[test]
    fn reads_regular_files_only_and_never_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (file, link, fifo) = (root.join("a.txt"), root.join("link.txt"), root.join("fifo"));
        std::fs::write(&file, "hello").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert_eq!(read_file(&file, 5, false).unwrap(), b"hello");
        assert!(matches!(
            read_file(&file, 4, false),
            Err(ReadError::TooLarge { limit: 4 })
        ));
        assert_eq!(read_file(&link, 5, true).unwrap(), b"hello");
        assert!(matches!(
            read_file(&link, 5, false),
            Err(ReadError::NotRegular("a symbolic link"))
        ));
        // Neither way blocks on a FIFO without a writer.
        for follow in [true, false] {
            assert!(matches!(
                read_file(&fifo, 5, follow),
                Err(ReadError::NotRegular("a FIFO"))
            ));
        }
        assert!(matches!(
            read_file(Path::new("/dev/zero"), 5, true),
            Err(ReadError::NotRegular("a character device"))
        ));
        // A /proc file says it is empty: the bound holds while reading.
        #[cfg(target_os = "linux")]
        assert!(matches!(
            read_file(Path::new("/proc/self/status"), 5, true),
            Err(ReadError::TooLarge { limit: 5 })
        ));
        // Inside a boundary, links resolved.
        let inner = root.join("inner");
        std::fs::create_dir(&inner).unwrap();
        std::os::unix::fs::symlink(&file, inner.join("out.txt")).unwrap();
        assert!(matches!(
            read_inside(&inner.join("out.txt"), 5, &inner),
            Err(ReadError::Outside(_))
        ));
        assert_eq!(read_inside(&link, 5, &root).unwrap(), b"hello");
        assert!(read_inside(&root.join("missing"), 5, &root).unwrap_err().is_not_found());
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
