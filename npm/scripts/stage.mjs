#!/usr/bin/env node
// Stages the npm packages for publishing (or for installing from a clone): copies the templates
// in npm/retrylint and npm/platforms/<os>-<arch> to OUT, stamps VERSION into every package.json
// (the launcher's optionalDependencies included), copies README.md, LICENSE and
// retrylint.schema.json into the launcher, and each given binary into its platform package.
//
//   node npm/scripts/stage.mjs --version 0.1.0 --out dist/npm \
//     --binary linux-x64=target/x86_64-unknown-linux-musl/dist/retrylint [--binary …] [--all]
//   node npm/scripts/stage.mjs --version 0.1.0 --out target/npm --pack --host-binary target/dist/retrylint
//
// --host-binary is --binary for the platform this runs on. --all fails unless every platform
// has a binary (the release does that). Prints the staged package directories, one a line;
// with --pack, each is also packed (`npm pack`) into OUT, and the .tgz files are printed
// instead: `npm i -D OUT/*.tgz` installs them as the registry would.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const npmDir = path.resolve(here, "..");
const repoRoot = path.resolve(npmDir, "..");
const require = createRequire(import.meta.url);
const launcher = require(path.join(npmDir, "retrylint", "bin", "retrylint.js"));

function fail(message) {
  process.stderr.write(`stage: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { binaries: new Map(), all: false, pack: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--version") options.version = value().replace(/^v/, "");
    else if (arg === "--out") options.out = path.resolve(value());
    else if (arg === "--all") options.all = true;
    else if (arg === "--pack") options.pack = true;
    else if (arg === "--host-binary") options.binaries.set(`${process.platform}-${process.arch}`, value());
    else if (arg === "--binary") {
      const [platform, file] = value().split(/=(.*)/s);
      if (!file) fail("--binary takes PLATFORM=FILE, e.g. linux-x64=target/release/retrylint");
      options.binaries.set(platform, file);
    } else fail(`unknown argument ${arg}`);
  }
  if (!options.version) fail("--version is required");
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(options.version)) {
    fail(`--version ${options.version} is not a semantic version`);
  }
  if (!options.out) fail("--out is required");
  return options;
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function copyDir(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyDir(source, target);
    else fs.copyFileSync(source, target);
  }
}

const options = parseArgs(process.argv.slice(2));
const platforms = fs
  .readdirSync(path.join(npmDir, "platforms"), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const main = readJson(path.join(npmDir, "retrylint", "package.json"));

// The launcher, the templates and the optional dependencies must name the same packages.
const expected = platforms.map((p) => readJson(path.join(npmDir, "platforms", p, "package.json")).name);
const sameSet = (a, b) => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
if (!sameSet(Object.keys(launcher.PLATFORMS), platforms)) {
  fail(`the launcher knows ${Object.keys(launcher.PLATFORMS)}, npm/platforms holds ${platforms}`);
}
if (!sameSet(Object.values(launcher.PLATFORMS), expected)) fail("launcher package names differ from the templates");
if (!sameSet(Object.keys(main.optionalDependencies), expected)) {
  fail("retrylint's optionalDependencies differ from the platform packages");
}
for (const platform of options.binaries.keys()) {
  if (!platforms.includes(platform)) fail(`no platform package for ${platform} (known: ${platforms.join(", ")})`);
}
if (options.all) {
  const missing = platforms.filter((p) => !options.binaries.has(p));
  if (missing.length) fail(`--all: no binary for ${missing.join(", ")}`);
}

fs.rmSync(options.out, { recursive: true, force: true });
const staged = [];

const mainOut = path.join(options.out, "retrylint");
copyDir(path.join(npmDir, "retrylint"), mainOut);
main.version = options.version;
for (const name of Object.keys(main.optionalDependencies)) main.optionalDependencies[name] = options.version;
writeJson(path.join(mainOut, "package.json"), main);
for (const file of ["README.md", "LICENSE", "retrylint.schema.json"]) fs.copyFileSync(path.join(repoRoot, file), path.join(mainOut, file));
fs.chmodSync(path.join(mainOut, "bin", "retrylint.js"), 0o755);
staged.push(mainOut);

for (const platform of platforms) {
  const binary = options.binaries.get(platform);
  if (!binary) continue;
  if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) fail(`${binary} is not a file`);
  const out = path.join(options.out, platform);
  copyDir(path.join(npmDir, "platforms", platform), out);
  const manifest = readJson(path.join(out, "package.json"));
  manifest.version = options.version;
  writeJson(path.join(out, "package.json"), manifest);
  fs.copyFileSync(path.join(repoRoot, "LICENSE"), path.join(out, "LICENSE"));
  const target = path.join(out, manifest.retrylint.binary);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(binary, target);
  fs.chmodSync(target, 0o755);
  staged.push(out);
}

if (!options.pack) {
  process.stdout.write(`${staged.join("\n")}\n`);
} else {
  const packed = [];
  for (const dir of staged) {
    const npm = spawnSync("npm", ["pack", "--silent", "--json", "--pack-destination", options.out, dir], {
      encoding: "utf8",
      shell: process.platform === "win32",
      stdio: ["ignore", "pipe", "inherit"],
    });
    if (npm.status !== 0) fail(`npm pack ${dir} failed${npm.error ? `: ${npm.error.message}` : ""}`);
    for (const { filename } of JSON.parse(npm.stdout)) packed.push(path.join(options.out, filename));
  }
  process.stdout.write(`${packed.join("\n")}\n`);
}
