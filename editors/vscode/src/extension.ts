// The retrylint extension: starts `retrylint lsp` (the binary resolve.ts finds) as a language
// server for every kind of file retrylint reads, and restarts it when its settings change.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

import { resolveBinary } from "./resolve";

// VS Code's language ids of the files retrylint reads: TypeScript and JavaScript (.ts .tsx .mts
// .cts .js .jsx .mjs .cjs), Vue and Svelte components, Rust, SQL (lease statements), and JSON and
// YAML (RS2 retry policies; VS Code calls tsconfig.json and the like "jsonc"). package.json's
// activationEvents name the same ones (tests/vscode.rs compares both with what the binary reads).
const LANGUAGES = [
  "typescript",
  "typescriptreact",
  "javascript",
  "javascriptreact",
  "vue",
  "svelte",
  "rust",
  "sql",
  "json",
  "jsonc",
  "yaml",
];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("retrylint");
  if (!config.get<boolean>("enable", true)) return;
  const folders = workspaceFolders();
  const resolved = resolveBinary({
    setting: config.get<string | null>("path", null),
    workspaceFolders: folders,
    extensionPath: context.extensionPath,
  });
  output ??= vscode.window.createOutputChannel("retrylint");
  if (!resolved) {
    const message =
      "retrylint: no retrylint binary found. Install it in the workspace (npm i -D retrylint), " +
      "put it on PATH (cargo install --locked --path . in a clone of retrylint), or set retrylint.path.";
    output.appendLine(message);
    void vscode.window.showErrorMessage(message);
    return;
  }
  const args = ["lsp", ...config.get<string[]>("args", [])];
  output.appendLine(`starting ${resolved.command} ${args.join(" ")} (from ${resolved.source})`);
  const serverOptions: ServerOptions = {
    command: resolved.command,
    args,
    options: { cwd: folders[0], env: process.env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.map((language) => ({
      scheme: "file",
      language,
    })),
    outputChannel: output,
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher("**/retrylint.toml"),
    },
  };
  client = new LanguageClient("retrylint", "retrylint", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(`retrylint: cannot start ${resolved.command} (${resolved.source}): ${why}`);
    client = undefined;
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) await running.stop();
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
  await stop();
  await start(context);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("retrylint.restart", () => restart(context)),
    vscode.commands.registerCommand("retrylint.showOutput", () => output?.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("retrylint")) void restart(context);
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => restart(context)),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}
