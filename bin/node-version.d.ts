export declare const REQUIRED_MAJOR: number;
/** null when `version` (process.versions.node) will do; otherwise what to tell the person who ran the command. */
export declare function nodeVersionProblem(version: string, execPath: string): string | null;
