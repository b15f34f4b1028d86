// The binary search order of resolve.ts, under plain Node (`npm test`): no VS Code needed.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { expandSetting, isExecutableFile, PLATFORM_PACKAGES, resolveBinary } from "../resolve";

/** A fake file system: the executables that exist. */
function only(...files: string[]): (file: string) => boolean {
  const set = new Set(files);
  return (file) => set.has(file);
}

const base = {
  workspaceFolders: ["/work/shop", "/work/lib"],
  extensionPath: "/ext/retrylint",
  platform: "linux" as NodeJS.Platform,
  arch: "x64",
  env: { PATH: "/usr/local/bin:/home/me/.cargo/bin" },
  homedir: "/home/me",
};

test("the setting wins, expanded, even when the file is missing", () => {
  const everything = () => true;
  assert.deepEqual(resolveBinary({ ...base, setting: "/opt/retrylint", isExecutable: everything }), {
    command: "/opt/retrylint",
    source: "setting",
  });
  assert.deepEqual(resolveBinary({ ...base, setting: "${workspaceFolder}/tools/retrylint", isExecutable: only() }), {
    command: "/work/shop/tools/retrylint",
    source: "setting",
  });
  assert.equal(resolveBinary({ ...base, setting: "~/bin/retrylint", isExecutable: only() })?.command, "/home/me/bin/retrylint");
  assert.equal(resolveBinary({ ...base, setting: "./bin/retrylint", isExecutable: only() })?.command, "/work/shop/bin/retrylint");
  assert.equal(resolveBinary({ ...base, setting: "retrylint-nightly", isExecutable: only() })?.command, "retrylint-nightly");
});

test("an empty setting is no setting", () => {
  const found = resolveBinary({ ...base, setting: "  ", isExecutable: only("/usr/local/bin/retrylint") });
  assert.deepEqual(found, { command: "/usr/local/bin/retrylint", source: "path" });
});

test("the workspace's platform package, then its node_modules/.bin, folder by folder", () => {
  const platformBinary = "/work/lib/node_modules/@retrylint/linux-x64/bin/retrylint";
  const shim = "/work/shop/node_modules/.bin/retrylint";
  assert.deepEqual(resolveBinary({ ...base, isExecutable: only(platformBinary, shim, "/usr/local/bin/retrylint") }), {
    command: shim,
    source: "workspace",
  });
  const shopBinary = "/work/shop/node_modules/@retrylint/linux-x64/bin/retrylint";
  assert.deepEqual(resolveBinary({ ...base, isExecutable: only(shopBinary, shim) }), {
    command: shopBinary,
    source: "workspace",
  });
  assert.deepEqual(resolveBinary({ ...base, isExecutable: only(platformBinary) }), {
    command: platformBinary,
    source: "workspace",
  });
});

test("the bundled binary before PATH", () => {
  const found = resolveBinary({ ...base, isExecutable: only("/ext/retrylint/bin/retrylint", "/usr/local/bin/retrylint") });
  assert.deepEqual(found, { command: "/ext/retrylint/bin/retrylint", source: "bundled" });
});

test("PATH last, in order", () => {
  const found = resolveBinary({
    ...base,
    isExecutable: only("/home/me/.cargo/bin/retrylint", "/usr/local/bin/retrylint"),
  });
  assert.deepEqual(found, { command: "/usr/local/bin/retrylint", source: "path" });
  assert.equal(resolveBinary({ ...base, isExecutable: only() }), undefined);
  assert.equal(resolveBinary({ ...base, env: {}, isExecutable: only("/usr/local/bin/retrylint") }), undefined);
});

test("Windows: .exe names, the package binary only (npm's .cmd shim needs a shell), Path", () => {
  const win = {
    ...base,
    platform: "win32" as NodeJS.Platform,
    workspaceFolders: ["C:\\work\\shop"],
    extensionPath: "C:\\ext\\retrylint",
    env: { Path: "C:\\tools;C:\\Users\\me\\.cargo\\bin" },
  };
  const pkg = "C:\\work\\shop\\node_modules\\@retrylint\\win32-x64\\bin\\retrylint.exe";
  assert.deepEqual(resolveBinary({ ...win, isExecutable: only(pkg) }), { command: pkg, source: "workspace" });
  assert.equal(resolveBinary({ ...win, isExecutable: only("C:\\work\\shop\\node_modules\\.bin\\retrylint") }), undefined);
  assert.deepEqual(resolveBinary({ ...win, isExecutable: only("C:\\ext\\retrylint\\bin\\retrylint.exe") }), {
    command: "C:\\ext\\retrylint\\bin\\retrylint.exe",
    source: "bundled",
  });
  assert.deepEqual(resolveBinary({ ...win, isExecutable: only("C:\\Users\\me\\.cargo\\bin\\retrylint.exe") }), {
    command: "C:\\Users\\me\\.cargo\\bin\\retrylint.exe",
    source: "path",
  });
});

test("a platform without an npm package still finds the shim, the bundle and PATH", () => {
  const found = resolveBinary({ ...base, platform: "freebsd", isExecutable: only("/work/shop/node_modules/.bin/retrylint") });
  assert.deepEqual(found, { command: "/work/shop/node_modules/.bin/retrylint", source: "workspace" });
  assert.equal(PLATFORM_PACKAGES["freebsd-x64"], undefined);
});

test("expandSetting without a workspace leaves relative paths alone", () => {
  assert.equal(expandSetting("bin/retrylint", [], "/home/me"), "bin/retrylint");
  assert.equal(expandSetting("${userHome}/retrylint", [], "/home/me"), "/home/me/retrylint");
});

test("isExecutableFile on the real file system", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "retrylint-vscode-"));
  const file = path.join(dir, "retrylint");
  fs.writeFileSync(file, "#!/bin/sh\n");
  fs.chmodSync(file, 0o644);
  if (process.platform !== "win32") assert.equal(isExecutableFile(file), false);
  fs.chmodSync(file, 0o755);
  assert.equal(isExecutableFile(file), true);
  assert.equal(isExecutableFile(dir), false);
  assert.equal(isExecutableFile(path.join(dir, "missing")), false);
});
