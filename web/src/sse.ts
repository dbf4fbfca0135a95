// An incremental parser of the text/event-stream format (WHATWG HTML, "server-sent events"):
// feed it chunks as they arrive, get complete events back.

export interface SseMessage {
  id: string | null; // the `id:` field, when the event had one
  event: string; // `event:` field, "message" when absent
  data: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | null = null;
  private sawField = false;
  retryMs: number | null = null; // last `retry:` value

  // Returns the events completed by `chunk`.
  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone "\r" at the end may be the first half of "\r\n": wait for more.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') {
      if (!this.sawField) return null;
      const message = { id: this.id, event: this.event || 'message', data: this.data.join('\n') };
      this.data = [];
      this.event = '';
      this.id = null;
      this.sawField = false;
      return message;
    }
    if (line.startsWith(':')) return null; // comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.sawField = true;
        break;
      case 'event':
        this.event = value;
        this.sawField = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        this.sawField = true;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return null;
  }
}
