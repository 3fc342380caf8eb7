// Minimal types for semver 7, which ships none: only what test/unit/node-versions.test.js uses.
declare module 'semver' {
  export function satisfies(version: string, range: string): boolean;
  export function minVersion(range: string): { major: number, version: string } | null;
}
