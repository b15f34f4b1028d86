// Generated project layouts for the module resolution differential test.
//
//   node layouts.mjs --seed 42 --count 12 --out /tmp/layouts
//
// Writes `count` layouts of every category under `out` (each a project with an empty
// retrylint.toml), and prints one line per layout: {"dir": "<abs>", "category": "<name>"}.
// The same seed writes the same bytes (mulberry32). Every source file is a list of imports
// and re-exports; which of them resolve, and to what, is for TypeScript (resolve.mjs) and
// retrylint (`retrylint resolve-imports`) to say. Workspace packages are linked into
// node_modules as package managers link them, and the build output their package.json names
// is written as a declaration-only build would write it (files marked `// built`), so that
// TypeScript sees an installed and built workspace; the test also checks that retrylint
// answers the same without the links and the build.
import fs from "node:fs";
import path from "node:path";

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, arg, i, all) => (arg.startsWith("--") ? [...acc, [arg.slice(2), all[i + 1]]] : acc), []),
);
const seed = Number(args.seed ?? 42);
const count = Number(args.count ?? 10);
const out = path.resolve(args.out ?? "/tmp/retrylint-layouts");
const rand = mulberry32(seed);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;
const some = (xs, p = 0.6) => {
  const chosen = xs.filter(() => chance(p));
  return chosen.length ? chosen : [pick(xs)];
};

const MODULE_SETTINGS = {
  bundler: { module: "esnext", moduleResolution: "bundler" },
  preserve: { module: "preserve" },
  node10: { module: "commonjs", moduleResolution: "node10" },
  node: { module: "commonjs", moduleResolution: "node" },
  commonjs: { module: "commonjs" },
  node16: { module: "node16" },
  nodenext: { module: "nodenext", moduleResolution: "nodenext" },
  node20: { module: "node20" },
  classic: { target: "es2020" },
  "esnext-classic": { module: "esnext" },
};
const resolutionNames = Object.keys(MODULE_SETTINGS);

class Layout {
  constructor(category) {
    this.category = category;
    this.files = new Map();
    this.links = new Map();
  }
  file(p, content) {
    this.files.set(p, content);
    return this;
  }
  json(p, value) {
    return this.file(p, JSON.stringify(value, null, 2) + "\n");
  }
  module(p, name = "value") {
    return this.file(p, `export const ${name} = 1\n`);
  }
  importer(p, specifiers) {
    const lines = specifiers.map((s, i) =>
      i % 3 === 2 ? `export { value as v${i} } from ${JSON.stringify(s)}` : `import * as m${i} from ${JSON.stringify(s)}`,
    );
    return this.file(p, lines.join("\n") + "\n");
  }
  link(p, target) {
    this.links.set(p, target);
    return this;
  }
  /// A declaration-only build of `pkg`'s src/ into `outDir` (`rooted`: of the package, so
  /// `outDir/src/…`).
  build(pkg, outDir = "dist", rooted = false) {
    for (const [p] of [...this.files]) {
      const prefix = `${pkg}/src/`;
      if (!p.startsWith(prefix) || /\.d\.[mc]?ts$/.test(p)) continue;
      const rel = p.slice(prefix.length);
      const m = rel.match(/^(.*)\.(ts|tsx|mts|cts)$/);
      if (!m) continue;
      const ext = { ts: ".d.ts", tsx: ".d.ts", mts: ".d.mts", cts: ".d.cts" }[m[2]];
      this.file(`${pkg}/${outDir}/${rooted ? "src/" : ""}${m[1]}${ext}`, "// built\nexport declare const value: number\n");
    }
    return this;
  }
  write(dir) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "retrylint.toml"), "");
    for (const [p, content] of this.files) {
      fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
      fs.writeFileSync(path.join(dir, p), content);
    }
    for (const [p, target] of this.links) {
      const at = path.join(dir, p);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.symlinkSync(path.relative(path.dirname(at), path.join(dir, target)), at);
    }
  }
}

function options(resolution, extra = {}) {
  return { ...MODULE_SETTINGS[resolution], ...extra };
}

// extends chains: paths and baseUrl set at different levels, relative to the config that
// declares them; `extends` with and without `.json`, arrays, `${configDir}`.
function extendsChain() {
  const l = new Layout("extends-chain");
  const resolution = pick(["bundler", "node10", "nodenext", "node16", "preserve"]);
  const levels = pick([1, 2, 3]);
  const configs = ["tsconfig.json"];
  for (let i = 1; i <= levels; i++) configs.push(pick([`configs/level${i}.json`, `tsconfig.level${i}.json`]));
  const baseUrlAt = pick([null, ...configs.keys()]);
  const pathsAt = pick([...configs.keys()]);
  const optionsAt = pick([...configs.keys()]);
  configs.forEach((config, i) => {
    const dir = path.posix.dirname(config);
    const toRoot = path.posix.relative(dir, ".") || ".";
    const compilerOptions = {};
    if (i === optionsAt) Object.assign(compilerOptions, options(resolution));
    if (i === baseUrlAt) compilerOptions.baseUrl = pick([toRoot, "${configDir}"]);
    if (i === pathsAt) {
      // Right for where `paths` are relative to (baseUrl when some config sets it, else the
      // declaring config), or written as if relative to the root.
      const base = baseUrlAt !== null ? "." : toRoot;
      const target = chance(0.75) ? `${base === "." ? "." : base}/src/*` : "./src/*";
      compilerOptions.paths = { "~/*": [pick([target, "${configDir}/src/*"])] };
    }
    const json = { compilerOptions };
    if (i < configs.length - 1) {
      const next = configs[i + 1];
      let rel = path.posix.relative(dir, next);
      if (!rel.startsWith(".")) rel = `./${rel}`;
      if (chance(0.3)) rel = rel.replace(/\.json$/, "");
      json.extends = chance(0.2) ? [rel] : rel;
    }
    if (i === 0 && chance(0.3)) json.include = ["src"];
    l.json(config, json);
  });
  l.json("package.json", { name: "chain", ...(chance(0.5) ? { type: "module" } : {}) });
  l.module("src/lib/retry.ts").module("src/lib/index.ts").module("configs/src/lib/retry.ts");
  l.importer("src/app/main.ts", some(["~/lib/retry", "~/lib/retry.js", "~/lib", "~/lib/index.js", "../lib/retry.js", "../lib/retry", "~/missing", "lib/retry"]));
  return l;
}

// A base config published in node_modules (`@tsconfig/node20`), as a file or a package.
function extendsPackage() {
  const l = new Layout("extends-package");
  const base = pick([
    ["@tsconfig/node20", { module: "node16", target: "es2022", moduleResolution: "node16" }],
    ["@tsconfig/node-lts", { module: "nodenext", target: "es2022" }],
    ["@tsconfig/bundler", { module: "esnext", moduleResolution: "bundler" }],
    ["@tsconfig/strictest", { strict: true }],
  ]);
  const [name, compilerOptions] = base;
  let extendsName;
  if (chance(0.35)) {
    // A config package of the workspace (`tooling/tsconfig`), linked into node_modules.
    l.json("tooling/tsconfig/package.json", { name: "@ws/tsconfig", version: "1.0.0" });
    l.json("tooling/tsconfig/node.json", { compilerOptions });
    l.json("tooling/tsconfig/tsconfig.json", { compilerOptions });
    l.link("node_modules/@ws/tsconfig", "tooling/tsconfig");
    extendsName = pick(["@ws/tsconfig/node", "@ws/tsconfig/node.json", "@ws/tsconfig"]);
  } else {
    l.json(`node_modules/${name}/package.json`, { name, version: "1.0.0" });
    l.json(`node_modules/${name}/tsconfig.json`, { compilerOptions });
    extendsName = pick([`${name}/tsconfig.json`, name, `${name}/tsconfig`]);
  }
  l.json("tsconfig.json", { extends: extendsName, compilerOptions: chance(0.3) ? { baseUrl: "." } : {} });
  l.json("package.json", { name: "app", ...(chance(0.6) ? { type: "module" } : {}) });
  l.module("src/a.ts").module("src/dir/index.ts").module("src/b.mts").module("src/c.cts");
  const importer = pick(["src/main.ts", "src/main.mts", "src/main.cts"]);
  l.importer(importer, some(["./a", "./a.js", "./dir", "./dir/index.js", "./b.mjs", "./c.cjs", "src/a"]));
  return l;
}

// Solution-style configs: tsconfig.json only references projects; the one including the
// file gives its options (its own `paths` over a base that sets `baseUrl`).
function solution() {
  const l = new Layout("solution");
  const resolution = pick(["bundler", "nodenext", "node10"]);
  l.json("tsconfig.json", {
    files: [],
    references: [{ path: "./tsconfig.src.json" }, { path: pick(["./tsconfig.tools.json", "./tools"]) }],
  });
  const baseOptions = options(resolution, chance(0.6) ? { baseUrl: "." } : {});
  l.json("tsconfig.base.json", { compilerOptions: baseOptions });
  const srcPaths = { "~/*": ["./src/*"] };
  l.json("tsconfig.src.json", { extends: "./tsconfig.base.json", compilerOptions: { composite: true, paths: srcPaths }, include: ["src"] });
  const toolsOptions = { composite: true, paths: { "~/*": ["./tools/*"] } };
  const refs = JSON.parse(l.files.get("tsconfig.json")).references;
  if (refs[1].path === "./tools") {
    l.json("tools/tsconfig.json", { extends: "../tsconfig.base.json", compilerOptions: { composite: true, paths: { "~/*": ["./*"] } } });
  } else {
    l.json("tsconfig.tools.json", { extends: "./tsconfig.base.json", compilerOptions: toolsOptions, include: ["tools"] });
  }
  l.json("package.json", { name: "solution", ...(chance(0.5) ? { type: "module" } : {}) });
  l.module("src/helpers.ts").module("src/lib/retry.ts").module("tools/helpers.ts");
  const specs = ["~/helpers", "~/helpers.js", "~/lib/retry", "~/lib/retry.js", "./helpers.js"];
  l.importer("src/main.ts", some(specs));
  l.importer("tools/build.ts", some(specs));
  l.importer("scripts/once.ts", some(["~/helpers", "../src/helpers.js"]));
  return l;
}

// `paths` patterns: exact keys, longest prefix, prefixes and suffixes around `*`, several
// targets (the first that exists wins), a target with an extension, without `baseUrl`.
function pathPatterns() {
  const l = new Layout("paths-patterns");
  const resolution = pick(["bundler", "node10", "nodenext"]);
  const dir = pick([".", "config"]);
  const up = dir === "." ? "." : "..";
  const paths = {
    "@/*": [`${up}/src/*`],
    "@/lib/*": [`${up}/lib/*`],
    exact: [`${up}/src/exact.ts`],
    "@x/*.js": [`${up}/x/*.ts`],
    "multi/*": some([`${up}/gen/*`, `${up}/src/*`, `${up}/none/*`], 0.7),
    "*": chance(0.3) ? [`${up}/vendor/*`] : undefined,
    "#alias/*": [`${up}/src/*`],
  };
  for (const k of Object.keys(paths)) if (!paths[k]) delete paths[k];
  const compilerOptions = { ...options(resolution), paths };
  if (chance(0.3)) {
    compilerOptions.baseUrl = up;
    for (const k of Object.keys(paths)) paths[k] = paths[k].map((t) => t.replace(/^\.\.?\//, "./"));
  }
  if (dir === ".") l.json("tsconfig.json", { compilerOptions });
  else {
    l.json(`${dir}/tsconfig.paths.json`, { compilerOptions });
    l.json("tsconfig.json", { extends: `./${dir}/tsconfig.paths.json` });
  }
  l.json("package.json", { name: "patterns", ...(chance(0.4) ? { type: "module" } : {}) });
  l.module("src/a.ts").module("src/exact.ts").module("lib/b.ts").module("src/lib/c.ts").module("x/d.ts");
  l.module("gen/e.ts").module("src/e.ts").module("src/f.ts").module("vendor/left-pad.ts");
  l.importer("src/main.ts", some(["@/a", "@/a.js", "@/lib/b", "@/lib/c", "exact", "@x/d.js", "@x/d", "multi/e", "multi/f", "left-pad", "#alias/a", "@/nothing", "effect"]));
  return l;
}

// `rootDirs`: a relative import finds its file in another root with the same relative path.
function rootDirs() {
  const l = new Layout("rootdirs");
  l.json("tsconfig.json", { compilerOptions: { ...options(pick(["bundler", "node10"])), rootDirs: some(["./src", "./generated", "./other"], 0.8) } });
  l.module("src/views/page.ts").module("generated/views/template.ts").module("other/views/extra.ts");
  l.importer("src/views/main.ts", some(["./template", "./template.js", "./extra", "./page", "./nothing"]));
  return l;
}

// moduleResolution × package type × importing extension × specifier forms.
function moduleResolution() {
  const l = new Layout("module-resolution");
  const resolution = pick(resolutionNames);
  const compilerOptions = options(resolution, chance(0.3) ? { allowJs: true } : {});
  if (chance(0.2)) compilerOptions.allowImportingTsExtensions = true, compilerOptions.noEmit = true;
  l.json("tsconfig.json", { compilerOptions });
  l.json("package.json", { name: "modes", ...(chance(0.5) ? { type: pick(["module", "commonjs"]) } : {}) });
  l.module("src/a.ts").module("src/b.mts").module("src/c.cts").module("src/d.tsx").module("src/dir/index.ts");
  l.module("src/e.js").file("src/f.d.ts", "export declare const value: number\n");
  l.module("src/g.ts").file("src/g.d.ts", "export declare const value: number\n");
  l.module("src/h.js").file("src/h.d.ts", "export declare const value: number\n");
  l.module("src/Case.ts").module("src/both.ts").module("src/both/index.ts").module("src/jsdir/index.js");
  l.json("src/pkgdir/package.json", { main: "./entry.js", ...(chance(0.5) ? { type: "module" } : {}) }).module("src/pkgdir/entry.ts");
  const importer = pick(["src/main.ts", "src/main.mts", "src/main.cts", "src/main.tsx", "src/main.js"]);
  if (importer.endsWith(".js")) compilerOptions.allowJs = true, l.json("tsconfig.json", { compilerOptions });
  l.importer(importer, some([
    "./a", "./a.js", "./a.ts", "./b.mjs", "./b", "./b.mts", "./c.cjs", "./c", "./d.jsx", "./d.js", "./d",
    "./dir", "./dir/index.js", "./dir/", "./e", "./e.js", "./f", "./f.js", "./g", "./g.js", "./h", "./h.js",
    "./case", "./Case", "./both", "./jsdir", "./pkgdir", "./missing", "./a.json",
  ], 0.5));
  return l;
}

/// A workspace package `packages/<name>` with package.json `manifest`, linked the way
/// `manager` links it: hoisted into the root's node_modules (npm, yarn, bun), or into the
/// node_modules of the package that depends on it (pnpm, `importer`).
function workspacePackage(l, name, manifest, manager, importer = "packages/app") {
  const dir = `packages/${name.split("/").pop()}`;
  l.json(`${dir}/package.json`, { name, version: "1.0.0", ...manifest });
  if (manager === "pnpm" && importer !== ".") l.link(`${importer}/node_modules/${name}`, dir);
  else l.link(`node_modules/${name}`, dir);
  return dir;
}

// package.json `exports`: conditions, nesting, arrays, subpath patterns, null, custom
// conditions; a workspace package and a package installed in node_modules.
function exportsConditions() {
  const l = new Layout("exports");
  const resolution = pick(["bundler", "nodenext", "node16", "node10"]);
  const custom = chance(0.3);
  l.json("package.json", { name: "root", private: true, workspaces: ["packages/*"] });
  l.json("packages/app/tsconfig.json", { compilerOptions: { ...options(resolution), ...(custom ? { customConditions: ["source"] } : {}) } });
  l.json("packages/app/package.json", { name: "@ws/app", ...(chance(0.6) ? { type: "module" } : {}) });
  const root = pick([
    "./src/index.ts",
    { types: "./src/index.ts", default: "./src/index.js" },
    { import: { types: "./dist/index.d.mts", default: "./dist/index.mjs" }, require: { types: "./dist/index.d.cts", default: "./dist/index.cjs" } },
    { source: "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" },
    { types: "./dist/index.d.ts", import: "./dist/index.js", require: "./dist/index.cjs" },
    { types: "./dist/src/index.d.ts", default: "./dist/src/index.js" },
    ["./src/index.ts", "./fallback.js"],
    { node: { import: "./src/node.ts" }, default: "./src/index.ts" },
  ]);
  const sub = pick([
    { "./*": "./src/*.ts" },
    { "./features/*": "./src/features/*.ts", "./features/internal/*": null },
    { "./features/*.js": "./src/features/*.ts" },
    { "./features/*": { types: "./dist/features/*.d.ts", default: "./dist/features/*.js" } },
    { "./retry": { import: "./src/retry.ts", require: "./src/retry.cts" } },
  ]);
  const manager = pick(["npm", "pnpm", "yarn", "bun"]);
  const manifest = { exports: { ".": root, ...sub }, main: "./dist/index.js", types: "./dist/index.d.ts" };
  if (chance(0.2)) manifest.type = "module";
  const dir = workspacePackage(l, "@ws/lib", manifest, manager);
  l.module(`${dir}/src/index.ts`).module(`${dir}/src/node.ts`).module(`${dir}/src/retry.ts`).module(`${dir}/src/retry.cts`);
  l.module(`${dir}/src/features/a.ts`).module(`${dir}/src/features/internal/x.ts`).module(`${dir}/src/index.mts`).module(`${dir}/src/index.cts`);
  l.build(dir).build(dir, "dist", true);
  // A published package in node_modules, never read by retrylint.
  l.json("node_modules/published/package.json", { name: "published", exports: { ".": { types: "./index.d.ts", default: "./index.js" } } });
  l.file("node_modules/published/index.d.ts", "export declare const value: number\n").module("node_modules/published/index.js");
  const importer = pick(["packages/app/src/main.ts", "packages/app/src/main.mts", "packages/app/src/main.cts"]);
  l.importer(importer, some(["@ws/lib", "@ws/lib/features/a", "@ws/lib/features/a.js", "@ws/lib/features/internal/x", "@ws/lib/retry", "@ws/lib/index", "@ws/lib/missing", "published", "unpublished"]));
  return l;
}

// package.json `imports` (`#src/*`, seen in a real v4 app), conditions, a bare target.
function subpathImports() {
  const l = new Layout("imports");
  const resolution = pick(["bundler", "nodenext", "node16", "node10"]);
  l.json("tsconfig.json", { compilerOptions: options(resolution) });
  const imports = {
    "#src/*": pick(["./src/*", "./src/*.js", "./src/*.ts", { types: "./src/*.ts", default: "./dist/*.js" }, ["./src/*.ts", "./other/*.ts"]]),
    "#config": { node: "./src/config.node.ts", default: "./src/config.ts" },
    "#db": "@ws/db",
    "#lib/*.js": "./src/lib/*.ts",
  };
  l.json("package.json", { name: "app", imports, workspaces: ["packages/*"], ...(chance(0.6) ? { type: "module" } : {}) });
  const db = workspacePackage(l, "@ws/db", { exports: { ".": pick(["./src/index.ts", { types: "./dist/index.d.ts", default: "./dist/index.js" }]) }, main: "./src/index.ts" }, "npm");
  l.module(`${db}/src/index.ts`).build(db);
  l.module("src/lib/retry.ts").module("src/config.ts").module("src/config.node.ts").module("src/lib/index.ts");
  l.importer("src/app/main.ts", some(["#src/lib/retry.js", "#src/lib/retry", "#src/lib/retry.ts", "#src/lib", "#config", "#db", "#lib/retry.js", "#missing/x", "#", "#src/nothing"]));
  return l;
}

// `typesVersions` in a package without `exports` (node10), and `types`/`main`.
function typesVersions() {
  const l = new Layout("types-versions");
  l.json("tsconfig.json", { compilerOptions: options(pick(["node10", "bundler", "nodenext"])) });
  l.json("package.json", { name: "app", workspaces: ["packages/*"] });
  const tv = pick([{ "*": { "*": ["src/*"] } }, { ">=4.0": { "sub/*": ["src/sub/*"] } }, { "<4.0": { "*": ["old/*"] }, "*": { "*": ["src/*"] } }]);
  const dir = workspacePackage(l, "@ws/tv", { types: pick(["./src/index.ts", "./index.d.ts"]), typesVersions: tv }, pick(["npm", "pnpm"]), ".");
  l.module(`${dir}/src/index.ts`).module(`${dir}/src/sub/a.ts`).module(`${dir}/src/b.ts`).module(`${dir}/old/b.ts`);
  l.importer("src/main.ts", some(["@ws/tv", "@ws/tv/sub/a", "@ws/tv/b", "@ws/tv/old/b"]));
  return l;
}

// Workspaces of each package manager: main/types into a build, self-name imports, a
// package's own subpaths.
function workspaces() {
  const l = new Layout("workspace");
  const manager = pick(["npm", "pnpm", "yarn", "bun"]);
  const resolution = pick(["bundler", "nodenext", "node10"]);
  l.json("package.json", { name: "mono", private: true, workspaces: ["packages/*"] });
  if (manager === "pnpm") l.file("pnpm-workspace.yaml", "packages:\n  - packages/*\n");
  l.json("tsconfig.base.json", { compilerOptions: options(resolution) });
  l.json("packages/app/tsconfig.json", { extends: "../../tsconfig.base.json" });
  l.json("packages/app/package.json", { name: "@ws/app", ...(chance(0.5) ? { type: "module" } : {}) });
  const manifest = pick([
    { main: "./dist/index.js", types: "./dist/index.d.ts" },
    { main: "./src/index.ts" },
    { types: "./src/index.ts", exports: { ".": "./src/index.ts", "./*": "./src/*.ts" } },
    { exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" }, "./package.json": "./package.json" } },
  ]);
  const dir = workspacePackage(l, "@ws/shared", manifest, manager);
  l.json(`${dir}/tsconfig.json`, { extends: "../../tsconfig.base.json" });
  l.module(`${dir}/src/index.ts`).module(`${dir}/src/retry.ts`).build(dir);
  // A package imports its own name through its `exports`; without them, only where it is
  // hoisted into node_modules above it (pnpm does not link a package into itself).
  const selfNamed = manager !== "pnpm" || (manifest.exports && resolution !== "node10");
  l.importer(`${dir}/src/self.ts`, some(selfNamed ? ["@ws/shared", "@ws/shared/retry", "./retry.js", "./retry"] : ["./retry.js", "./retry"]));
  l.importer("packages/app/src/main.ts", some(["@ws/shared", "@ws/shared/retry", "@ws/shared/src/retry", "@ws/shared/dist/index", "@ws/other"]));
  return l;
}

// Declarations beside code, and names that differ only in case.
function declarations() {
  const l = new Layout("declarations");
  l.json("tsconfig.json", { compilerOptions: { ...options(pick(["bundler", "node10", "nodenext"])), allowJs: chance(0.5) } });
  l.module("src/x.ts").file("src/x.d.ts", "export declare const value: number\n");
  l.file("src/y.d.ts", "export declare const value: number\n");
  l.module("src/z.js").file("src/z.d.ts", "export declare const value: number\n");
  l.module("src/w.mjs").file("src/w.d.mts", "export declare const value: number\n");
  l.module("src/Retry.ts");
  l.importer("src/main.ts", some(["./x", "./x.js", "./y", "./y.js", "./z", "./z.js", "./w.mjs", "./retry", "./Retry", "./RETRY.js"]));
  return l;
}

const CATEGORIES = [extendsChain, extendsPackage, solution, pathPatterns, rootDirs, moduleResolution, exportsConditions, subpathImports, typesVersions, workspaces, declarations];

fs.mkdirSync(out, { recursive: true });
for (const make of CATEGORIES) {
  for (let i = 0; i < count; i++) {
    const layout = make();
    const dir = path.join(out, `${layout.category}-${String(i).padStart(3, "0")}`);
    layout.write(dir);
    process.stdout.write(JSON.stringify({ dir, category: layout.category }) + "\n");
  }
}
