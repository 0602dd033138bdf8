// Types for the hand-loaded WebAssembly schema engine (schema-engine.mjs).
export declare const SchemaEngine: {
  new: (
    config: { datamodels: Array<[string, string]> },
    log: (line: string) => void,
    adapter: unknown,
  ) => Promise<SchemaEngineInstance>;
};
export interface SchemaEngineInstance {
  applyMigrations(input: unknown): Promise<{ appliedMigrationNames: string[] }>;
  diagnoseMigrationHistory(input: unknown): Promise<unknown>;
  diff(input: unknown): Promise<{ exitCode: number; stdout?: string | null }>;
  free(): void;
}
export declare const version: () => string;
