// Minimal types for pg-cursor 2.x, which ships none and has no @types package here.
// Only what shared/audience/postgres-source.js uses is declared.
declare module 'pg-cursor' {
  import type { Connection, CustomTypesConfig, FieldDef, Submittable } from 'pg';

  export interface CursorConfig {
    /** 'array' yields each row as an array in column order instead of an object. */
    rowMode?: 'array';
    types?: CustomTypesConfig;
  }

  /** What read's callback receives besides the rows; fields are known once the portal is described. */
  export interface CursorResult {
    fields: FieldDef[];
  }

  export default class Cursor<Row = any> implements Submittable {
    constructor(text: string, values?: unknown[] | null, config?: CursorConfig);
    submit(connection: Connection): void;
    /** Fetches up to `rows` more rows; an empty array when the result is exhausted. */
    read(rows: number): Promise<Row[]>;
    read(rows: number, callback: (error: Error | undefined, rows: Row[], result: CursorResult | undefined) => void): void;
    /** Closes the portal; resolves once the connection is ready for the next query. */
    close(): Promise<void>;
    close(callback: (error?: Error) => void): void;
  }
}
