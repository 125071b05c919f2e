import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { ToolErrorBody } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { ExpectedSecret } from '../../../base/expectedSecret';
import { closeUnreadBody, isJsonContentType, secretsEqual } from '../../../base/node/httpRequest';
import { describeErrorWithStack } from '../../../base/describeError';
import type { WorkView } from '../common/steering';
import type { SteeringService } from '../common/steeringService';

export const INBOX_PATH = '/inbox';
/** Largest /inbox request body: an instruction is at most 16 KiB of text, so 64 KiB of JSON is plenty. */
export const INBOX_MAX_BODY_BYTES = 64 * 1024;

export interface InboxOptions {
  readonly steering: SteeringService;
  /** The inbox token (its own, never the /mcp token), read per request so a rotation applies at once. */
  readonly token: () => ExpectedSecret | undefined;
  readonly logger: Logger;
}

interface HttpError {
  readonly status: number;
  readonly body: ToolErrorBody | { code: string; message: string; hint?: string };
}

function send(res: Response, status: number, body: unknown): void {
  res.status(status).setHeader('cache-control', 'no-store');
  if (body === undefined) {
    res.end();
    return;
  }
  res.json(body);
}

function fail(res: Response, e: HttpError): void {
  send(res, e.status, { error: e.body });
}

/** The HTTP status of a steering error: a missing thing is 404, a state that forbids the change is 409. */
function statusOf(body: ToolErrorBody): number {
  switch (body.code) {
    case 'WORK_NOT_FOUND':
    case 'INSTRUCTION_NOT_FOUND':
      return 404;
    case 'OPERATION_KEY_CONFLICT':
      return 409;
    case 'INVALID_ARGUMENTS': {
      const reason = body.details?.reason;
      return reason === 'not_draft' || reason === 'invalid_state' || reason === 'revision_mismatch' || reason === 'work_finished' ? 409 : 400;
    }
    case 'INTERNAL':
      return 500;
    default:
      return 400;
  }
}

/** Requires `Authorization: Bearer <inbox token>`; the /mcp token is a different secret and never matches. */
function inboxToken(token: () => ExpectedSecret | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const expected = token();
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(req.headers.authorization ?? '');
    if (expected === undefined || match === null || !secretsEqual(match[1] as string, expected)) {
      closeUnreadBody(req, res);
      res.setHeader('WWW-Authenticate', 'Bearer realm="codespace-inbox"');
      fail(res, {
        status: 401,
        body: { code: 'UNAUTHORIZED', message: 'Unauthorized: send "Authorization: Bearer <inbox token>".', hint: 'Copy the inbox token in VS Code with "CodeSpace: Copy Inbox Token". The /mcp token does not open /inbox.' },
      });
      return;
    }
    next();
  };
}

/** A request that carries a body: JSON by Content-Type, at most 64 KiB, an object. */
function jsonBody() {
  const parse = express.json({ limit: INBOX_MAX_BODY_BYTES, strict: true, type: () => true });
  return (req: Request, res: Response, next: NextFunction): void => {
    // application/json only: a browser's "text/plain" simple request changes nothing.
    if (!isJsonContentType(req.headers['content-type'])) {
      fail(res, { status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json.' } });
      return;
    }
    parse(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) {
        const e = err as { type?: string; status?: number };
        if (e.type === 'entity.too.large') fail(res, { status: 413, body: { code: 'TOO_LARGE', message: `The body is larger than ${INBOX_MAX_BODY_BYTES} bytes.` } });
        else if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported') fail(res, { status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The body must be UTF-8 JSON.' } });
        else fail(res, { status: 400, body: { code: 'INVALID_JSON', message: 'The body is not valid JSON.' } });
        return;
      }
      const body: unknown = req.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        fail(res, { status: 400, body: { code: 'INVALID_ARGUMENTS', message: 'The body must be a JSON object.' } });
        return;
      }
      next();
    });
  };
}

function field<T>(body: Record<string, unknown>, name: string, check: (v: unknown) => v is T, what: string, required: boolean): T | undefined {
  const v = body[name];
  if (v === undefined) {
    if (required) throw new InvalidArgumentsError(`"${name}" is required: ${what}.`, { field: name });
    return undefined;
  }
  if (!check(v)) throw new InvalidArgumentsError(`"${name}" must be ${what}.`, { field: name });
  return v;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isRevision = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) throw new InvalidArgumentsError(`Unknown field "${k.length > 50 ? `${k.slice(0, 50)}…` : k}"; allowed: ${allowed.join(', ')}.`, { field: k });
  }
}

/**
 * The /inbox JSON API as a route the HTTP host serves beside /mcp (its `routes` option): what the panel can do with
 * a work's instructions, for a user-facing client outside the editor. Its own bearer token, checked here before
 * anything else (the /mcp token never opens it); JSON only; the host's Host and Origin guards run before it. It can
 * list works and instructions and create, edit, delete and queue drafts: it never approves, never changes a setting.
 */
export function inboxRoute(options: InboxOptions): { readonly path: string; readonly handler: Router } {
  return { path: INBOX_PATH, handler: inboxRouter(options) };
}

function inboxRouter(options: InboxOptions): Router {
  const { steering } = options;
  const router = express.Router({ strict: true, caseSensitive: true });
  router.use(inboxToken(options.token));

  const handle =
    (fn: (req: Request, res: Response) => Promise<void> | void) =>
    (req: Request, res: Response): void => {
      Promise.resolve()
        .then(() => fn(req, res))
        .catch((err: unknown) => {
          if (ToolError.is(err) || InvalidArgumentsError.is(err)) {
            const body = err.toBody();
            fail(res, { status: statusOf(body), body });
            return;
          }
          options.logger.error('[inbox] request failed', describeErrorWithStack(err));
          fail(res, { status: 500, body: { code: 'INTERNAL', message: 'The request failed inside the extension.' } });
        });
    };

  const workOut = (w: WorkView) => ({ ...w, counts: steering.counts(w.id) });

  router.get('/works', handle((req, res) => {
    const status = req.query.status;
    if (status !== undefined && status !== 'open' && status !== 'finished') throw new InvalidArgumentsError('status must be "open" or "finished".', { field: 'status' });
    send(res, 200, { works: steering.works(status === undefined ? undefined : { status }).map(workOut) });
  }));

  router.get('/works/:workId', handle((req, res) => {
    const w = steering.work(req.params.workId as string);
    if (!w) throw new ToolError('WORK_NOT_FOUND', `No work ${JSON.stringify(req.params.workId)}.`);
    send(res, 200, { work: workOut(w), instructions: steering.instructions(w.id) });
  }));

  router.get('/works/:workId/instructions', handle((req, res) => {
    const all = steering.instructions(req.params.workId as string);
    const status = req.query.status;
    send(res, 200, { instructions: typeof status === 'string' ? all.filter((i) => i.status === status) : all });
  }));

  router.post('/works/:workId/instructions', jsonBody(), handle(async (req, res) => {
    const body = req.body as Record<string, unknown>;
    onlyFields(body, ['text', 'queue']);
    const text = field(body, 'text', isString, 'the instruction text (a string)', true) as string;
    const queue = field(body, 'queue', isBoolean, 'true or false', false);
    const keyHeader = req.headers['idempotency-key'];
    const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
    const out = await steering.create(req.params.workId as string, text, { ...(queue !== undefined ? { queue } : {}), ...(key !== undefined ? { idempotencyKey: key } : {}) });
    // A replay (same key, same body) answers 200 with the instruction the key created; a new one is 201.
    send(res, out.created ? 201 : 200, { instruction: out.instruction });
  }));

  router.get('/instructions/:id', handle((req, res) => {
    const i = steering.instruction(req.params.id as string);
    if (!i) throw new ToolError('INSTRUCTION_NOT_FOUND', `No instruction ${JSON.stringify(req.params.id)}.`);
    send(res, 200, { instruction: i });
  }));

  router.patch('/instructions/:id', jsonBody(), handle(async (req, res) => {
    const body = req.body as Record<string, unknown>;
    onlyFields(body, ['text', 'revision']);
    const text = field(body, 'text', isString, 'the new text (a string)', true) as string;
    const revision = field(body, 'revision', isRevision, 'the revision you read (a positive integer)', false);
    send(res, 200, { instruction: await steering.editDraft(req.params.id as string, text, revision) });
  }));

  router.delete('/instructions/:id', handle(async (req, res) => {
    await steering.deleteDraft(req.params.id as string);
    send(res, 204, undefined);
  }));

  router.post('/instructions/:id/queue', jsonBody(), handle(async (req, res) => {
    onlyFields(req.body as Record<string, unknown>, []);
    send(res, 200, { instruction: await steering.queue(req.params.id as string) });
  }));

  router.post('/instructions/:id/requeue', jsonBody(), handle(async (req, res) => {
    onlyFields(req.body as Record<string, unknown>, []);
    send(res, 200, { instruction: await steering.requeue(req.params.id as string) });
  }));

  router.use((req: Request, res: Response) => {
    fail(res, { status: 404, body: { code: 'NOT_FOUND', message: `No such inbox route: ${req.method} ${INBOX_PATH}${req.path.length > 100 ? `${req.path.slice(0, 100)}…` : req.path}.` } });
  });
  return router;
}
