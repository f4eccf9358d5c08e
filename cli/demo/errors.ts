export class DemoError extends Error {}
