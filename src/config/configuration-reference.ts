import { settings } from './app-config.js';

/** Markdown table cells: a pipe would end the cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * docs/configuration.md, generated from AppConfig (each setting's @Setting description and its
 * default) by `npm run docs`; a spec fails when the committed page differs. `appendix`: sections of
 * settings made elsewhere than in the environment, which the layers above configuration generate
 * (scripts/reference-docs.mjs passes them).
 */
export function configurationReference(appendix: string[] = []): string {
  const rows = settings().map((setting) => {
    const { defaultValue } = setting;
    const plain = typeof defaultValue === 'string' ? defaultValue : JSON.stringify(defaultValue);
    const defaultText = setting.defaultText ?? (defaultValue === undefined ? '—' : `\`${plain}\``);
    return `| \`${setting.name}\` | ${cell(defaultText)} | ${cell(setting.description)} |`;
  });
  return [
    '# Configuration reference',
    '',
    'Patchbay reads these environment variables once, at start, and validates them: an invalid value stops the',
    'service with a message naming the variable (a secret value is never shown). Empty counts as unset.',
    '',
    '<!-- Generated from src/config/app-config.ts by `npm run docs`; a test fails when this page differs. -->',
    '',
    '| Variable | Default | Meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
    ...appendix,
  ].join('\n');
}
