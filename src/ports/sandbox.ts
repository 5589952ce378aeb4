/**
 * The sandbox port: runs the untrusted JavaScript of design documents over
 * batches of documents, for the view builder (`map` functions, which call
 * `emit(key, value)`) and the geo builder (hastings `st_index` functions,
 * which call `st_index(geometry)`).
 *
 * Every failure of a user function is data: a per-document, per-function
 * outcome. `run` rejects only when called after `dispose`.
 */

export type IndexFunctionKind = "map" | "st_index";

export interface IndexFunctionSource {
  /** For error reports, e.g. the view name. */
  readonly name: string;
  readonly kind: IndexFunctionKind;
  /** As stored in the design document: `function(doc) { ... }`, an arrow function, ... */
  readonly source: string;
}

export interface SandboxLimits {
  /** One function on one document (CouchDB's os_process_timeout is 5000). */
  readonly timeoutMsPerDoc: number;
  /** One `run` call, all of its documents; what is left when it runs out is `timeout`. */
  readonly timeoutMsPerBatch: number;
  /** The guest heap: the batch being run and everything the functions allocate. */
  readonly memoryBytes: number;
}

/** One `emit(key, value)`: JSON values (undefined became null), copied when emitted. */
export type EmittedRow = readonly [key: unknown, value: unknown];

export type FunctionFailureKind = "exception" | "timeout" | "memory" | "compile";

/** What one function did with one document; results line up with the compiled functions. */
export type FunctionOutcome =
  | { readonly ok: true; readonly emits: readonly EmittedRow[] }
  /** Each `st_index(geometry)` argument, as JSON. */
  | { readonly ok: true; readonly geometries: readonly unknown[] }
  | { readonly ok: false; readonly error: string; readonly kind: FunctionFailureKind };

export interface DocOutcome {
  /** The document's `_id` ("" when it had none). */
  readonly id: string;
  /** One per function, in the order given to `compile`. */
  readonly results: readonly FunctionOutcome[];
  /** `log(message)` lines from all functions on this document, in call order. */
  readonly logs: readonly string[];
}

/**
 * A document its store already holds as JSON text (a JSON object, `_id`
 * first): sent to the sandbox as it is, not serialized again. The store
 * vouches for the text; the sandbox still parses it in its own context.
 */
export class SerializedDoc {
  constructor(
    readonly id: string,
    readonly json: string,
  ) {}
}

/** One design doc's (or one index's) functions, compiled once, in a context of their own. */
export interface IndexSandbox {
  /** One outcome per document, in order. Pass many documents per call: a call has a fixed cost. */
  run(docs: readonly (Record<string, unknown> | SerializedDoc)[]): Promise<readonly DocOutcome[]>;
  /** Idempotent. Frees the context; a pending `run` still settles. */
  dispose(): void;
}

export interface CompileError {
  readonly name: string;
  readonly error: string;
}

export interface SandboxFactory {
  /**
   * Compiles every function; one that fails (syntax, not a function, throws,
   * loops while evaluating) is listed in `errors` and yields `compile` failures
   * on every document, the others work.
   */
  compile(
    functions: readonly IndexFunctionSource[],
    limits?: Partial<SandboxLimits>,
  ): Promise<{ readonly sandbox: IndexSandbox; readonly errors: readonly CompileError[] }>;
}
