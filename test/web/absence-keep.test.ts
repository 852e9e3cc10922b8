// A report that fails keeps what the family typed (an outside tester: the refusal page led back to an empty form).
// Over HTTP on the real app, with the school's system gone (the sandbox closed): the 503 page says nothing was
// reported and holds the form again, with the reason as typed, ready to send once more.
import { describe, expect, it } from 'vitest';
import { absenceServer, childWithForm, PUBLIC, postForm } from './absence-page.ts';

const w = absenceServer();

describe('a report that fails', () => {
  it('answers with the form again, the reason kept as typed, to try once more', async () => {
    const { token, form } = await childWithForm(w.h, w.server.url);
    await w.h.sandbox.close();
    const reason = 'Dentist at 4 & "orthodontist" <after>';
    const failed = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: form.session,
      student: form.student,
      reason,
    });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    expect(failed.text).toMatch(/nothing was reported/);
    expect(failed.text).toContain(`action="${PUBLIC}/feeds/${token}/absences"`);
    expect(failed.text).toContain('value="Dentist at 4 &amp; &quot;orthodontist&quot; &lt;after&gt;"');
    expect(failed.text).toContain(`name="session" value="${form.session}"`);
    expect(failed.text).toContain(`name="student" value="${form.student}"`);
    expect(failed.text).toContain(`name="csrf" value="${form.csrf}"`);
  });
});
