// Installs and builds a copy of a fixture workspace the way a package manager and a
// declaration-only `tsc -b` would, so that TypeScript can resolve what retrylint resolves
// without either (workspace packages by name, their build output mapped back to source):
//
//   node install.mjs /tmp/copy-of-fixture
//
// Links every named package below the root into the root's node_modules (as npm, yarn and
// bun hoist workspace packages), unless something of that name is there already; and, for a
// package whose package.json names files in dist/, build/, lib/ or out/, writes a declaration
// `<out>/x.d.ts` (marked `// built`) for each `src/x.ts`. Nothing else changes.
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2]);
const OUTPUTS = ["dist", "build", "lib", "out"];

function* walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else if (entry.isFile()) yield p;
  }
}

function strings(value, out = []) {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => strings(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => strings(v, out));
  return out;
}

const files = [...walk(root)];
for (const manifestPath of files.filter((f) => path.basename(f) === "package.json")) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch {
    continue;
  }
  const dir = path.dirname(manifestPath);
  if (dir === root || typeof manifest.name !== "string") continue;
  const link = path.join(root, "node_modules", manifest.name);
  if (!fs.existsSync(link)) {
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.relative(path.dirname(link), dir), link);
  }
  const named = strings([manifest.main, manifest.types, manifest.typings, manifest.module, manifest.exports, manifest.imports]);
  const outputs = OUTPUTS.filter((o) => named.some((s) => s.replace(/^\.\//, "").startsWith(`${o}/`)));
  const src = path.join(dir, "src");
  for (const file of files.filter((f) => f.startsWith(src + path.sep))) {
    const m = path.relative(src, file).match(/^(.*)\.(ts|tsx|mts|cts)$/);
    if (!m || /\.d$/.test(m[1])) continue;
    const ext = { ts: ".d.ts", tsx: ".d.ts", mts: ".d.mts", cts: ".d.cts" }[m[2]];
    for (const out of outputs) {
      const target = path.join(dir, out, m[1] + ext);
      if (fs.existsSync(target)) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, "// built\nexport {};\n");
    }
  }
}
