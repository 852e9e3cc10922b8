// What commands print (terminal.ts): upstream text inside a line can never start a line of its own, rewrite the
// screen or reverse it; JSON keeps the same value with those characters escaped; tables count what is shown.
import { describe, expect, it } from 'vitest';
import {
  columns,
  escapeForTerminal,
  ownLines,
  plainLine,
  terminalJson,
  terminalSafe,
} from '../src/terminal.ts';

describe('terminal output', () => {
  it('turns control and bidi characters into spaces', () => {
    expect(terminalSafe('Hockey\r\nBEGIN:VEVENT')).toBe('Hockey  BEGIN:VEVENT');
    expect(terminalSafe('\u001b[2JClear\u202eevil\u2066')).toBe(' [2JClear evil ');
    expect(terminalSafe('Lê Thị Hà 李')).toBe('Lê Thị Hà 李');
  });

  it('escapes in JSON what JSON leaves raw, keeping the value', () => {
    const value = { name: 'a\u202eb\u0085c\u2028d' };
    const text = terminalJson(value);
    expect(text).toBe('{"name":"a\\u202eb\\u0085c\\u2028d"}');
    expect(JSON.parse(text)).toEqual(value);
    expect(escapeForTerminal('"plain"')).toBe('"plain"');
    expect(terminalJson(undefined)).toBe('null');
  });

  it('keeps its own line breaks, and pads table columns to what is shown', () => {
    expect(ownLines('usage:\n  rostercal sync')).toEqual(['usage:', '  rostercal sync']);
    expect(
      columns(
        ['id', 'name', 'note'],
        [
          ['1', 'Ana\nX', 'ok'],
          ['22', '李', ''],
        ],
      ),
    ).toEqual(['id  name   note', '1   Ana X  ok', '22  李']);
    expect(columns(['a', 'b'], [['x'.repeat(50), 'y']], 10)[1]).toBe(`${'x'.repeat(50)}  y`);
  });

  it("a message's placeholder in angle brackets is words, not a tag; a page still prints as its title", () => {
    expect(plainLine('a valid API token is required (Authorization: Bearer <token>)')).toBe(
      'a valid API token is required (Authorization: Bearer <token>)',
    );
    expect(plainLine('<html><head><title>502 Bad Gateway</title></head><body>x</body></html>')).toBe(
      '502 Bad Gateway',
    );
    expect(plainLine('<p>Service <b>down</b></p>')).toBe('Service down');
  });
});
