import { Router, type Request, type RequestHandler, type Response } from 'express';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join, relative, sep } from 'node:path';

export const ASSETS_PATH = '/assets';

/** A year; a changed file gets a new name, so nobody need ever ask again for this one. */
const CACHE_FOREVER = 'public, max-age=31536000, immutable';

interface Asset {
  url: string;
  body: Buffer;
}

/**
 * The pages' stylesheets, scripts and icons under names that carry a hash of their contents
 * (`/assets/app.3f9a1c2b.css`), computed when the app starts: browsers keep each for a year
 * without asking again, and a changed file is a new URL. They are served from what was read and
 * hashed at start, so an answer always matches its name; any other name under /assets is a 404.
 * Pages name them by their path under public/ through the `asset` view helper.
 */
export class Assets {
  private readonly byName = new Map<string, Asset>();
  private readonly byUrl = new Map<string, Asset>();

  /** Every file under `dir`, named by its path there (`css/app.css`). */
  addFolder(dir: string): this {
    const files = readdirSync(dir, { recursive: true, withFileTypes: true });
    for (const file of files.filter((entry) => entry.isFile())) {
      const path = join(file.parentPath, file.name);
      this.add(relative(dir, path).split(sep).join('/'), path);
    }
    return this;
  }

  /** One file, under the name pages use for it. */
  add(name: string, file: string): this {
    const body = readFileSync(file);
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 8);
    const extension = extname(file);
    const url = `${ASSETS_PATH}/${basename(name, extension)}.${hash}${extension}`;
    const clash = this.byUrl.get(url);
    if (clash && !clash.body.equals(body)) throw new Error(`Two assets would be served at ${url}`);
    const asset = { url, body };
    this.byName.set(name, asset);
    this.byUrl.set(url, asset);
    return this;
  }

  /** The URL of the asset named `name`; a name that is not an asset is a mistake in a view. */
  url(name: string): string {
    const asset = this.byName.get(name);
    if (!asset)
      throw new Error(
        `No asset named "${name}" (public/ has: ${[...this.byName.keys()].join(', ')})`,
      );
    return asset.url;
  }

  /** Every asset's URL by its name, for views to look up. */
  urlsByName(): ReadonlyMap<string, string> {
    return new Map([...this.byName].map(([name, asset]) => [name, asset.url]));
  }

  urls(): string[] {
    return [...this.byUrl.keys()];
  }

  /** GET and HEAD of the assets' URLs; anything else goes on (to a 404, or a 405). */
  handler(): RequestHandler {
    const router = Router();
    router.use(ASSETS_PATH, (req: Request, res: Response, next) => {
      const asset = this.byUrl.get(ASSETS_PATH + req.path);
      if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
      res.setHeader('Cache-Control', CACHE_FOREVER);
      res.type(extname(asset.url)).send(asset.body);
    });
    return router;
  }
}
