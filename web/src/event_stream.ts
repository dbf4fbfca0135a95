// The daemon's live events (GET /api/v1/events, Server-Sent Events) read with fetch, because
// EventSource cannot send the Authorization header the API requires. Reconnects by itself
// (with the last durable event id, so nothing stored is missed) and reports its state.
import { authHeaders } from './api';
import { SseParser } from './sse';

export interface DaemonEvent {
  id?: number; // durable events only
  type: string;
  time: number;
  campaign_id?: number;
  payload: Record<string, unknown>;
}

export type StreamState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  | { kind: 'retrying'; retryAt: number; reason: string; attempt: number };

// No bytes for this long means the connection is dead (the daemon sends a comment every 15 s).
const SILENCE_LIMIT_MS = 40_000;
const MAX_BACKOFF_MS = 10_000;

export class EventStream {
  // 0: the first connection replays every stored event (the pages learn each context's plan
  // from them); later ones resume after the last event seen.
  private lastEventId: number | null = 0;
  private controller: AbortController | null = null;
  private stopped = false;
  private attempt = 0;
  private retryTimer: number | undefined;
  private serverRetryMs = 2000;
  state: StreamState = { kind: 'connecting' };

  constructor(
    private readonly onEvent: (event: DaemonEvent) => void,
    private readonly onState: (state: StreamState) => void,
    // Called after every successful (re)connection: the page re-reads what it shows, since
    // transient events sent while disconnected are not replayed.
    private readonly onConnected: () => void,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.retryTimer);
    this.controller?.abort();
  }

  // Drops the connection and connects again now (e.g. after the token changed).
  restart(): void {
    this.stop();
    this.attempt = 0;
    this.start();
  }

  private setState(state: StreamState): void {
    this.state = state;
    this.onState(state);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.setState({ kind: 'connecting' });
    const controller = new AbortController();
    this.controller = controller;
    let silence: number | undefined;
    const armSilenceTimer = () => {
      window.clearTimeout(silence);
      silence = window.setTimeout(() => controller.abort(), SILENCE_LIMIT_MS);
    };
    let reason = 'connection closed by the daemon';
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream', ...authHeaders() };
      if (this.lastEventId !== null) headers['Last-Event-ID'] = String(this.lastEventId);
      armSilenceTimer();
      const response = await fetch('/api/v1/events', { headers, signal: controller.signal, cache: 'no-store' });
      if (!response.ok || !response.body) {
        reason = `the daemon answered HTTP ${response.status}`;
        throw new Error(reason);
      }
      this.attempt = 0;
      this.setState({ kind: 'live' });
      this.onConnected();
      const parser = new SseParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        armSilenceTimer();
        for (const message of parser.push(value)) this.dispatch(message.id, message.data);
        if (parser.retryMs !== null) this.serverRetryMs = parser.retryMs;
      }
    } catch (e) {
      if (this.stopped) return;
      if (!(e instanceof Error && e.message === reason)) {
        reason = controller.signal.aborted ? 'no data from the daemon for 40 s' : 'cannot reach the daemon';
      }
    } finally {
      window.clearTimeout(silence);
    }
    if (this.stopped) return;
    this.scheduleRetry(reason);
  }

  private dispatch(id: string | null, data: string): void {
    let event: DaemonEvent;
    try {
      event = JSON.parse(data) as DaemonEvent;
    } catch {
      return; // not ours
    }
    if (id !== null && /^\d+$/.test(id)) this.lastEventId = Number(id);
    this.onEvent(event);
  }

  private scheduleRetry(reason: string): void {
    this.attempt++;
    // The daemon's retry hint first, then doubling up to a ceiling.
    const delay = Math.min(MAX_BACKOFF_MS, this.serverRetryMs * 2 ** Math.min(this.attempt - 1, 4));
    this.setState({ kind: 'retrying', retryAt: Date.now() + delay, reason, attempt: this.attempt });
    this.retryTimer = window.setTimeout(() => void this.connect(), delay);
  }
}
