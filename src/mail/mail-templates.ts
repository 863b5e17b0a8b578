import { Inject, Injectable } from '@nestjs/common';
import hbs from 'hbs';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../common/paths.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';

type Template = (context: object) => string;

const DIR = join(PROJECT_ROOT, 'views', 'mail');

/**
 * The text and HTML bodies of messages, from `views/mail/<name>.text.hbs` and `.html.hbs`, each
 * inside the shared layout of its kind. A Handlebars environment of its own: the pages' helpers
 * and partials are not the mail's, and the text bodies are not HTML-escaped.
 */
@Injectable()
export class MailTemplates {
  private readonly handlebars = hbs.create().handlebars;
  private readonly compiled = new Map<string, Template>();
  private readonly base: { appName: string; appUrl: string };

  constructor(@Inject(CONFIG) config: Config) {
    this.base = { appName: 'Tessera', appUrl: config.app.publicUrl };
    // The HTML mails' call to action: a button with its link below it.
    this.handlebars.registerPartial(
      'action',
      readFileSync(join(DIR, 'partials', 'action.html.hbs'), 'utf8'),
    );
  }

  render(name: string, context: object): { text: string; html: string } {
    const data = { ...this.base, ...context };
    return {
      text: this.template('layout.text')({ ...data, body: this.template(`${name}.text`)(data) }),
      html: this.template('layout.html')({ ...data, body: this.template(`${name}.html`)(data) }),
    };
  }

  private template(file: string): Template {
    let template = this.compiled.get(file);
    if (!template) {
      const path = join(DIR, `${file}.hbs`);
      if (!existsSync(path)) throw new Error(`No mail template ${path}`);
      template = this.handlebars.compile(readFileSync(path, 'utf8'), {
        strict: true,
        noEscape: file.endsWith('.text'),
      });
      this.compiled.set(file, template);
    }
    return template;
  }
}
