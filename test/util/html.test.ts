// The page layer's promise: every value put into html`…` is escaped unless the layer made it, in text and in
// quoted attributes alike, and a value in an unquoted attribute is refused.
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, join, SafeHtml, trustedMarkup } from '../../src/util/html.ts';

const HOSTILE = `"><script>alert('x')</script><a href='`;

describe('html`…`', () => {
  it('escapes text and attribute values', () => {
    const out = html`<p title="${HOSTILE}">${HOSTILE}</p>`.toString();
    expect(out).not.toContain('<script>');
    expect(out).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;a href=&#39;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;a href=&#39;</p>',
    );
  });

  it('drops control and direction-override characters from text (an upstream staff name reversed /admin/audit rows)', () => {
    // Seen from outside: a staff name PATCHed upstream with ESC, BEL, BS and U+202E reached /admin and
    // /admin/audit raw; U+202E reversed the rest of the audit row, rostercal's own words included.
    const name =
      'OBrien\u001b[31mRED\u001b]0;pwned\u0007 FAKE\u0008\u0008\u202eevil\u2066x\u2069\u200f\u0085';
    const out = html`<td title="${name}">${name}</td>`.toString();
    expect(out).toBe('<td title="OBrien[31mRED]0;pwned FAKEevilx">OBrien[31mRED]0;pwned FAKEevilx</td>');
    // Line breaks and tabs are whitespace in HTML: kept (a textarea's own text keeps its lines).
    expect(html`<textarea>${'a\nb\tc'}</textarea>`.toString()).toBe('<textarea>a\nb\tc</textarea>');
  });

  it('puts its own templates in as they are; lists are joined; false, null and undefined say nothing', () => {
    const item = (t: string) => html`<li>${t}</li>`;
    expect(html`<ul>${['a<', 'b'].map(item)}</ul>${false}${null}${undefined}${0}`.toString()).toBe(
      '<ul><li>a&lt;</li><li>b</li></ul>0',
    );
    expect(join([html`<b>x</b>`, '&'], ', ').toString()).toBe('<b>x</b>, &amp;');
  });

  it('refuses a value in an unquoted attribute', () => {
    expect(() => html`<a href=${'x onmouseover=alert(1)'}>`).toThrow(/unquoted attribute/);
    expect(() => html`<a class="x" href = ${'y'}>`).toThrow(/unquoted attribute/);
    expect(() => html`<a href="${'a'}" title=${'y'}>`).toThrow(/unquoted attribute/);
    // A value continuing an unquoted value is as unsafe as one starting it.
    expect(() => html`<a href=/x?a=${'y'}>`).toThrow(/unquoted attribute/);
    expect(() => html`<a href=/x?a${'y'}>`).toThrow(/unquoted attribute/);
  });

  it('takes a value inside a quoted attribute that opened earlier in the quote, after a `=` too (/admin/login answered 500)', () => {
    const next = '/admin?x="><script>';
    expect(html`<a href="/auth/login?returnTo=${next}">s</a>`.toString()).toBe(
      '<a href="/auth/login?returnTo=/admin?x=&quot;&gt;&lt;script&gt;">s</a>',
    );
    expect(html`<a title='a = ${'b'}' href="/x?a=${'1'}&amp;b=${'2'}">`.toString()).toBe(
      `<a title='a = b' href="/x?a=1&amp;b=2">`,
    );
    // Outside any tag a `=` is text, not an attribute.
    expect(html`<p>x = ${'1'}</p>`.toString()).toBe('<p>x = 1</p>');
  });

  it('cannot be handed markup by anything but the layer', () => {
    // A look-alike object is text like any other.
    const fake = { toString: () => '<b>' } as unknown as string;
    expect(html`${fake}`.toString()).toBe('&lt;b&gt;');
    expect(() => new (SafeHtml as unknown as new (t: string) => SafeHtml)('<b>')).toThrow(TypeError);
    expect(html`${trustedMarkup('<svg></svg>')}`.toString()).toBe('<svg></svg>');
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});
