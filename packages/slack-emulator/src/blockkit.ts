// Block Kit checks live in ./blockkit/, a file per block family; this path stays for importers.
export * from "./blockkit/index.ts";
