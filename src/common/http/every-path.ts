/**
 * The path a module's middleware is given to run for every request (`forRoutes`). Nest registers
 * it with Express as a route for every method: it serves nothing, so neither the method check
 * nor the request log counts it as one.
 */
export const EVERY_PATH = '/{*path}';
