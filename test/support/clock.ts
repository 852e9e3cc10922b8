// The instant the tests' schools are built around, unless a test is about the present: a term-time Friday morning
// in Sydney (the sandbox school's zone), weeks from a holiday and from a daylight-saving change. A school built
// around the real date would change from run to run, and meet the summer break or a clock change on some days.
export const TEST_NOW = '2026-11-20T00:00:00.000Z';
