// The launcher's search order, without npm: `node --test npm/retrylint/test/`.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const { findBinary, PLATFORMS, notFound } = require("../bin/retrylint.js");

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "retrylint-launcher-"));
}

function executable(dir, name) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, "#!/bin/sh\n");
  fs.chmodSync(file, 0o755);
  return file;
}

/** A fake `require.resolve` that knows one installed platform package. */
function packageAt(root, name) {
  const dir = path.join(root, "node_modules", ...name.split("/"));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), "{}");
  return {
    dir,
    resolve: (request) => {
      if (request === `${name}/package.json`) return path.join(dir, "package.json");
      throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
    },
  };
}

const nothing = () => {
  throw new Error("not installed");
};

test("every supported platform maps to a scoped package", () => {
  assert.deepEqual(Object.keys(PLATFORMS).sort(), [
    "darwin-arm64",
    "darwin-x64",
    "linux-arm64",
    "linux-x64",
    "win32-x64",
  ]);
  for (const [key, name] of Object.entries(PLATFORMS)) assert.equal(name, `@retrylint/${key}`);
});

test("RETRYLINT_BINARY wins over the package and PATH", () => {
  const root = tempDir();
  const { dir, resolve } = packageAt(root, "@retrylint/linux-x64");
  executable(path.join(dir, "bin"), "retrylint");
  const onPath = path.join(root, "path");
  executable(onPath, "retrylint");
  const found = findBinary({
    env: { RETRYLINT_BINARY: "/opt/retrylint", PATH: onPath },
    platform: "linux",
    arch: "x64",
    resolve,
  });
  assert.deepEqual(found, { binary: "/opt/retrylint", source: "RETRYLINT_BINARY" });
});

test("the platform package's binary comes before PATH", () => {
  const root = tempDir();
  const { dir, resolve } = packageAt(root, "@retrylint/darwin-arm64");
  const binary = executable(path.join(dir, "bin"), "retrylint");
  const onPath = path.join(root, "path");
  executable(onPath, "retrylint");
  const found = findBinary({ env: { PATH: onPath }, platform: "darwin", arch: "arm64", resolve });
  assert.deepEqual(found, { binary, source: "package" });
});

test("Windows binaries end in .exe", () => {
  const root = tempDir();
  const { dir, resolve } = packageAt(root, "@retrylint/win32-x64");
  const binary = executable(path.join(dir, "bin"), "retrylint.exe");
  assert.deepEqual(findBinary({ env: {}, platform: "win32", arch: "x64", resolve }), { binary, source: "package" });
});

test("a package without its binary falls through to PATH", () => {
  const root = tempDir();
  const { resolve } = packageAt(root, "@retrylint/linux-arm64");
  const onPath = executable(path.join(root, "path"), "retrylint");
  const found = findBinary({ env: { PATH: `/nonexistent:${path.dirname(onPath)}` }, platform: "linux", arch: "arm64", resolve });
  assert.deepEqual(found, { binary: onPath, source: "PATH" });
});

test("PATH skips npm shims and the launcher itself", () => {
  const root = tempDir();
  const shims = path.join(root, "project", "node_modules", ".bin");
  fs.mkdirSync(shims, { recursive: true });
  fs.symlinkSync(path.resolve(__dirname, "..", "bin", "retrylint.js"), path.join(shims, "retrylint"));
  const selfLink = path.join(root, "self");
  fs.mkdirSync(selfLink);
  fs.symlinkSync(path.resolve(__dirname, "..", "bin", "retrylint.js"), path.join(selfLink, "retrylint"));
  const real = executable(path.join(root, "cargo", "bin"), "retrylint");
  const found = findBinary({
    env: { PATH: [shims, selfLink, path.dirname(real)].join(":") },
    platform: "linux",
    arch: "x64",
    resolve: nothing,
  });
  assert.deepEqual(found, { binary: real, source: "PATH" });
});

test("nothing found: null, and the message says what to do", () => {
  assert.equal(findBinary({ env: { PATH: "" }, platform: "linux", arch: "x64", resolve: nothing }), null);
  assert.equal(findBinary({ env: {}, platform: "freebsd", arch: "x64", resolve: nothing }), null);
  assert.match(notFound("linux", "x64"), /@retrylint\/linux-x64 is not installed/);
  assert.match(notFound("freebsd", "riscv64"), /no prebuilt retrylint for freebsd-riscv64/);
  assert.match(notFound("linux", "x64"), /RETRYLINT_BINARY/);
});
