// Which `retrylint` binary the extension starts. No `vscode` import: the unit tests run this
// module under plain Node.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/** Where the binary was found, in the order the extension looks. */
export type Source = "setting" | "workspace" | "bundled" | "path";

export interface Resolved {
  command: string;
  source: Source;
}

export interface ResolveInput {
  /** The `retrylint.path` setting. */
  setting?: string | null;
  /** The file-system paths of the workspace folders, first first. */
  workspaceFolders: readonly string[];
  /** Where the extension is installed (a platform-specific .vsix has `bin/` there). */
  extensionPath: string;
  platform?: NodeJS.Platform;
  arch?: string;
  env?: Record<string, string | undefined>;
  homedir?: string;
  isExecutable?: (file: string) => boolean;
}

/** The npm platform packages, as the `retrylint` npm package's launcher names them. */
export const PLATFORM_PACKAGES: Record<string, string> = {
  "linux-x64": "@retrylint/linux-x64",
  "linux-arm64": "@retrylint/linux-arm64",
  "darwin-x64": "@retrylint/darwin-x64",
  "darwin-arm64": "@retrylint/darwin-arm64",
  "win32-x64": "@retrylint/win32-x64",
};

export function executableName(platform: NodeJS.Platform): string {
  return platform === "win32" ? "retrylint.exe" : "retrylint";
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform !== "win32") fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` expanded; relative to the first folder. */
export function expandSetting(setting: string, workspaceFolders: readonly string[], homedir: string): string {
  const folder = workspaceFolders[0];
  let expanded = setting.replace(/\$\{userHome\}/g, homedir);
  if (folder !== undefined) expanded = expanded.replace(/\$\{workspaceFolder\}/g, folder);
  if (expanded === "~" || expanded.startsWith("~/") || expanded.startsWith("~\\")) {
    expanded = path.join(homedir, expanded.slice(1));
  }
  if (!path.isAbsolute(expanded) && folder !== undefined && /[\\/]/.test(expanded)) {
    expanded = path.resolve(folder, expanded);
  }
  return expanded;
}

/**
 * The binary to start: the `retrylint.path` setting (as given, even if it does not exist, so
 * the error names it), else the workspace's npm install (the platform package's binary, then
 * `node_modules/.bin/retrylint`), else the binary bundled in the extension, else `retrylint`
 * on PATH. `undefined` when there is none.
 */
export function resolveBinary(input: ResolveInput): Resolved | undefined {
  const platform = input.platform ?? process.platform;
  const arch = input.arch ?? process.arch;
  const env = input.env ?? process.env;
  const homedir = input.homedir ?? os.homedir();
  const isExecutable = input.isExecutable ?? isExecutableFile;
  const exe = executableName(platform);
  const join = platform === "win32" ? path.win32.join : path.posix.join;

  const setting = input.setting?.trim();
  if (setting) {
    return { command: expandSetting(setting, input.workspaceFolders, homedir), source: "setting" };
  }

  const packageName = PLATFORM_PACKAGES[`${platform}-${arch}`];
  for (const folder of input.workspaceFolders) {
    const candidates: string[] = [];
    if (packageName) candidates.push(join(folder, "node_modules", ...packageName.split("/"), "bin", exe));
    // npm's shim runs the launcher (Node); on Windows it is a .cmd, which needs a shell.
    if (platform !== "win32") candidates.push(join(folder, "node_modules", ".bin", "retrylint"));
    const found = candidates.find(isExecutable);
    if (found) return { command: found, source: "workspace" };
  }

  const bundled = join(input.extensionPath, "bin", exe);
  if (isExecutable(bundled)) return { command: bundled, source: "bundled" };

  const separator = platform === "win32" ? ";" : ":";
  for (const dir of (env.PATH ?? env.Path ?? "").split(separator)) {
    if (!dir) continue;
    const candidate = join(dir, exe);
    if (isExecutable(candidate)) return { command: candidate, source: "path" };
  }
  return undefined;
}
