//! The retrylint extension for Zed: runs `retrylint lsp` for TypeScript, TSX and Rust. The
//! binary is `lsp.retrylint.binary.path` from Zed's settings when set, else `retrylint` on the
//! worktree's PATH (Zed's shell environment, so an npm-installed `node_modules/.bin` on PATH
//! through direnv or a shell hook counts).

use zed_extension_api::{self as zed, settings::LspSettings, LanguageServerId, Result};

struct Retrylint;

impl zed::Extension for Retrylint {
    fn new() -> Self {
        Retrylint
    }

    fn language_server_command(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(language_server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.binary);
        let args = binary
            .as_ref()
            .and_then(|b| b.arguments.clone())
            .unwrap_or_else(|| vec!["lsp".to_string()]);
        let command = match binary.and_then(|b| b.path) {
            Some(path) => path,
            None => worktree.which("retrylint").ok_or_else(|| {
                "retrylint is not on PATH: `npm i -D retrylint`, `cargo install --locked retrylint`, \
                 or set lsp.retrylint.binary.path"
                    .to_string()
            })?,
        };
        Ok(zed::Command {
            command,
            args,
            env: worktree.shell_env(),
        })
    }
}

zed::register_extension!(Retrylint);
