#!/usr/bin/env node
// The `retrylint` command of the npm package: finds the native binary and runs it with this
// process's arguments, stdio, exit code and signals. The binary comes from, in order:
//   1. RETRYLINT_BINARY, when set (a local build, a binary the package has no build for);
//   2. the platform package npm installed as an optional dependency (@retrylint/<os>-<arch>);
//   3. `retrylint` on PATH (e.g. `cargo install --locked retrylint`), this launcher excluded.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

/** `${process.platform}-${process.arch}` → the package that holds its binary. */
const PLATFORMS = {
  "linux-x64": "@retrylint/linux-x64",
  "linux-arm64": "@retrylint/linux-arm64",
  "darwin-x64": "@retrylint/darwin-x64",
  "darwin-arm64": "@retrylint/darwin-arm64",
  "win32-x64": "@retrylint/win32-x64",
};

function executableName(platform) {
  return platform === "win32" ? "retrylint.exe" : "retrylint";
}

function isFile(file) {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function realpath(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/** The binary of the platform package, when npm installed it. */
function fromPlatformPackage(platform, arch, resolve) {
  const name = PLATFORMS[`${platform}-${arch}`];
  if (!name) return null;
  let manifest;
  try {
    manifest = resolve(`${name}/package.json`);
  } catch {
    return null;
  }
  const binary = path.join(path.dirname(manifest), "bin", executableName(platform));
  return isFile(binary) ? binary : null;
}

/** `retrylint` on PATH, skipping npm's shims (node_modules/.bin) and this script. */
function fromPath(env, platform) {
  const self = realpath(__filename);
  const separator = platform === "win32" ? ";" : ":";
  const names = platform === "win32" ? ["retrylint.exe"] : ["retrylint"];
  for (const dir of (env.PATH || env.Path || "").split(separator)) {
    if (!dir || /[\\/]node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (isFile(candidate) && realpath(candidate) !== self) return candidate;
    }
  }
  return null;
}

/** Where the binary is and how it was found, or null. */
function findBinary({
  env = process.env,
  platform = process.platform,
  arch = process.arch,
  resolve = require.resolve,
} = {}) {
  if (env.RETRYLINT_BINARY) {
    return { binary: env.RETRYLINT_BINARY, source: "RETRYLINT_BINARY" };
  }
  const packaged = fromPlatformPackage(platform, arch, resolve);
  if (packaged) return { binary: packaged, source: "package" };
  const onPath = fromPath(env, platform);
  if (onPath) return { binary: onPath, source: "PATH" };
  return null;
}

function notFound(platform, arch) {
  const name = PLATFORMS[`${platform}-${arch}`];
  const why = name
    ? `the optional dependency ${name} is not installed (npm skips optional dependencies with --omit=optional or --no-optional)`
    : `there is no prebuilt retrylint for ${platform}-${arch}`;
  return (
    `retrylint: no binary found: ${why}.\n` +
    "Set RETRYLINT_BINARY to a retrylint binary, or put one on PATH (cargo install --locked retrylint).\n"
  );
}

function run() {
  const found = findBinary();
  if (!found) {
    process.stderr.write(notFound(process.platform, process.arch));
    process.exit(2);
  }
  const child = spawn(found.binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
  // Forward what a terminal or a supervisor sends; the child decides how to stop.
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"].filter(
    (s) => process.platform !== "win32" || s !== "SIGQUIT",
  );
  const handlers = forwarded.map((signal) => {
    const handler = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    process.on(signal, handler);
    return [signal, handler];
  });
  child.on("error", (error) => {
    process.stderr.write(`retrylint: cannot run ${found.binary} (from ${found.source}): ${error.message}\n`);
    process.exit(2);
  });
  child.on("exit", (code, signal) => {
    for (const [s, handler] of handlers) process.removeListener(s, handler);
    if (signal) {
      // Die of the same signal, so the caller sees what the binary saw.
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

module.exports = { PLATFORMS, findBinary, executableName, notFound };

if (require.main === module) run();
