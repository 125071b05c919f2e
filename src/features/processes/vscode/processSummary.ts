import type { ProcessStatus } from '../common/processTypes';

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 07 min`. */
export function formatDuration(ms: number): string {
  const t = Math.max(0, Math.round(ms));
  if (t < 1000) return `${t} ms`;
  if (t < 59_950) return `${(t / 1000).toFixed(1)} s`; // 59.95 s would show as "60.0 s"
  const s = Math.round(t / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** How a process stands, in a few words: `running`, `exited 0`, `terminated`, `timed out`, `ended by SIGKILL`. */
export function stateText(status: ProcessStatus): string {
  if (status.state === 'running') return 'running';
  switch (status.termination) {
    case 'exited':
      return `exited ${status.exit_code ?? '?'}`;
    case 'terminated':
      return 'terminated';
    case 'timeout':
      return 'timed out';
    default:
      return status.signal ? `ended by ${status.signal}` : 'ended';
  }
}

/** One line about a process for a pick list: its state (with exit code) and how long it ran or has been running. */
export function processSummary(status: ProcessStatus, nowMs: number): string {
  const started = Date.parse(status.started_at);
  const ended = status.ended_at !== undefined ? Date.parse(status.ended_at) : nowMs;
  const duration = Number.isFinite(started) && Number.isFinite(ended) ? ` · ${formatDuration(ended - started)}` : '';
  return `${stateText(status)}${duration}`;
}
