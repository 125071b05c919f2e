/** Operator limits, read fresh on every call so a settings change applies at once. */
export interface Limits {
  /** Most content bytes one `read` returns. */
  readonly readBytes: number;
  /** Most paths one `find` returns. */
  readonly findResults: number;
  /** Output bytes retained per process. */
  readonly retainedOutputBytes: number;
}

export const DEFAULT_LIMITS: Limits = { readBytes: 1024 * 1024, findResults: 2000, retainedOutputBytes: 256 * 1024 };
