import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**"] },
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
      "no-restricted-imports": ["error", { patterns: ["node:*", "fs", "http", "https", "net", "undici", "**/adapters/**", "**/runtime/**", "**/http/**", "**/cli/**"] }],
    },
  },
);
