/** Error codes of the tool contract (docs: TOOLS.md "Error codes"). */
export const ERROR_CODES = [
  'INVALID_ARGUMENTS',
  'WORKSPACE_NOT_FOUND',
  'PATH_OUTSIDE_WORKSPACE',
  'NOT_FOUND',
  'IS_DIRECTORY',
  'NOT_TEXT',
  'TOO_LARGE',
  'PERMISSION_DENIED',
  'READ_ONLY',
  'EXEC_DISABLED',
  'INVALID_ARGUMENTS',
  'VERSION_REQUIRED',
  'VERSION_CONFLICT',
  'FILE_EXISTS',
  'FILE_DIRTY_IN_EDITOR',
  'PATCH_INVALID',
  'PATCH_CONTEXT_NOT_FOUND',
  'PATCH_AMBIGUOUS',
  'OPERATION_KEY_CONFLICT',
  'OPERATION_NOT_FOUND',
  'WORKSPACE_BUSY',
  'PROCESS_NOT_FOUND',
  'NOT_A_TTY',
  'PROCESS_EXITED',
  'APPROVAL_REQUIRED',
  'APPROVAL_CONFLICT',
  'APPROVAL_AMBIGUOUS',
  'APPROVAL_DENIED',
  'WORK_NOT_FOUND',
  'INSTRUCTION_NOT_FOUND',
  'WORK_FROZEN',
  'REVIEW_STALE',
  'TIMEOUT',
  'UNAVAILABLE',
  'TOOL_DISABLED',
  'INTERNAL',
  'SEARCH_UNAVAILABLE',
  'CANCELLED',
  'DEBUG_SESSION_ENDED',
  'NOT_STOPPED',
  'STALE_REFERENCE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ToolErrorBody {
  code: ErrorCode;
  message: string;
  hint?: string;
  details?: Record<string, unknown>;
}

/**
 * A tool ran and failed in a way the agent can act on. Branch on `code`, never on `message`.
 * The message is for the agent; it never carries a stack trace or a secret.
 */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  static is(err: unknown, code?: ErrorCode): err is ToolError {
    return err instanceof ToolError && (code === undefined || err.code === code);
  }

  toBody(): ToolErrorBody {
    const body: ToolErrorBody = { code: this.code, message: this.message };
    if (this.hint !== undefined) body.hint = this.hint;
    if (this.details !== undefined) body.details = this.details;
    return body;
  }
}

/**
 * The arguments were well-typed but make no sense (for example end_line before start_line). The MCP adapter
 * answers it like an argument that fails the input schema: a tool error with code INVALID_ARGUMENTS (MCP
 * 2025-11-25, SEP-1303), so the agent can correct the call. The message names the argument and what was expected;
 * `field` names it for `details.field`.
 */
export class InvalidArgumentsError extends Error {
  readonly field: string | undefined;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: { field?: string; hint?: string; details?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'InvalidArgumentsError';
    this.field = options.field;
    this.hint = options.hint;
    this.details = options.details;
  }

  static is(err: unknown): err is InvalidArgumentsError {
    return err instanceof InvalidArgumentsError;
  }

  toBody(): ToolErrorBody {
    const body: ToolErrorBody = { code: 'INVALID_ARGUMENTS', message: this.message };
    if (this.hint !== undefined) body.hint = this.hint;
    if (this.field !== undefined || this.details !== undefined) body.details = { ...(this.field === undefined ? {} : { field: this.field }), ...this.details };
    return body;
  }
}
