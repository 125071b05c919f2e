import { Emitter } from '../../../src/base/emitter';
import type { Disposable } from '../../../src/base/disposable';
import type { BreakpointSpec, DebugAction, DebugBreakpoint, DebugEvent, DebugFrame, DebugPort, DebugScope, DebugStartRequest, DebugVariable } from '../../../src/features/debug';

/** A DebugPort the unit tests drive: it records what the tools asked and emits the events a test makes. */
export class FakeDebug implements DebugPort {
  readonly events = new Emitter<DebugEvent>();
  readonly removed = new Emitter<readonly string[]>();
  launchConfigurations: string[] = ['Run app', 'Tests'];
  readonly starts: DebugStartRequest[] = [];
  readonly controls: { session: string; action: DebugAction; threadId: number }[] = [];
  readonly stopped: string[] = [];
  bps: DebugBreakpoint[] = [];
  frames: DebugFrame[] = [];
  scopeList: DebugScope[] = [];
  vars = new Map<number, DebugVariable[]>();
  evaluations: { frameId: number; expression: string }[] = [];
  private next = 0;

  configurations(): readonly string[] {
    return this.launchConfigurations;
  }
  async start(request: DebugStartRequest): Promise<{ session: string; name: string }> {
    this.starts.push(request);
    return { session: `s${++this.next}`, name: request.configuration ?? 'program' };
  }
  async stop(session: string): Promise<void> {
    this.stopped.push(session);
  }
  async control(session: string, action: DebugAction, threadId: number): Promise<void> {
    this.controls.push({ session, action, threadId });
  }
  async stack(_session: string, _threadId: number, start: number, levels: number): Promise<{ frames: DebugFrame[]; total: number }> {
    return { frames: this.frames.slice(start, start + levels), total: this.frames.length };
  }
  async scopes(): Promise<DebugScope[]> {
    return this.scopeList;
  }
  async variables(_session: string, ref: number): Promise<DebugVariable[]> {
    return this.vars.get(ref) ?? [];
  }
  async evaluate(_session: string, frameId: number, expression: string): Promise<{ result: string; type?: string; ref: number }> {
    this.evaluations.push({ frameId, expression });
    return { result: expression === 'big' ? 'x'.repeat(9000) : `value of ${expression}`, type: 'string', ref: 0 };
  }
  breakpoints(): readonly DebugBreakpoint[] {
    return this.bps;
  }
  addBreakpoint(bp: BreakpointSpec): string {
    const id = `bp${++this.next}`;
    this.bps.push({ ...bp, id, enabled: true });
    return id;
  }
  removeBreakpoints(ids: readonly string[]): void {
    this.bps = this.bps.filter((b) => !ids.includes(b.id));
    this.removed.emit(ids);
  }
  /** The developer removes a breakpoint in the editor. */
  removeByDeveloper(id: string): void {
    this.removeBreakpoints([id]);
  }
  onDidRemoveBreakpoints(listener: (ids: readonly string[]) => void): Disposable {
    return this.removed.on(listener);
  }
  onEvent(listener: (event: DebugEvent) => void): Disposable {
    return this.events.on(listener);
  }
}
