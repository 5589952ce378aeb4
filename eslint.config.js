import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", ".bench-build/**"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // House rule 2: the core is pure. No clock, timers, randomness or I/O.
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-globals": ["error", "setTimeout", "setInterval", "setImmediate", "process", "fetch", "performance"],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "the core takes time as a parameter" },
        { object: "Math", property: "random", message: "the core takes randomness as a parameter" },
      ],
      "no-restricted-syntax": ["error", { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "the core takes time as a parameter" }],
      "no-restricted-imports": ["error", { patterns: ["node:*", "fs", "http", "https", "net", "undici", "**/ports/**", "**/adapters/**", "**/config/**", "**/runtime/**", "**/http/**", "**/cli/**"] }],
    },
  },
  // Imports only go downwards (docs/ARCHITECTURE.md): core < ports < adapters < config < http < runtime < cli.
  ...layer("src/ports/**/*.ts", ["adapters", "config", "http", "runtime", "cli"]),
  ...layer("src/adapters/**/*.ts", ["config", "http", "runtime", "cli"]),
  ...layer("src/config/**/*.ts", ["http", "runtime", "cli"]),
  ...layer("src/http/**/*.ts", ["runtime", "cli"]),
  ...layer("src/runtime/**/*.ts", ["cli"]),
);

/** A layer may not import from the layers named (which sit above it). */
function layer(files, above) {
  return [
    {
      files: [files],
      rules: {
        "no-restricted-imports": ["error", { patterns: above.map((name) => ({ group: [`**/${name}/**`], message: `${files.split("/")[1]} sits below ${name}: imports only go downwards (docs/ARCHITECTURE.md)` })) }],
      },
    },
  ];
}
