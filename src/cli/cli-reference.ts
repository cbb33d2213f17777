import type { Command } from 'commander';

/**
 * docs/cli.md, generated from the command definitions (commander's own help data) by `npm run docs`;
 * a spec fails when the committed page differs.
 */
export function cliReference(program: Command): string {
  const help = program.createHelp();
  const sections: string[] = [];
  const visit = (command: Command, path: string[]) => {
    const subcommands = help.visibleCommands(command).filter((sub) => sub.name() !== 'help');
    if (subcommands.length > 0 && path.length > 0) {
      sections.push(`## patchbay ${path.join(' ')}`, '', help.commandDescription(command), '');
    }
    for (const sub of subcommands) {
      if (help.visibleCommands(sub).some((leaf) => leaf.name() !== 'help')) {
        visit(sub, [...path, sub.name()]);
      } else {
        sections.push(...commandSection(sub, [...path, sub.name()]));
      }
    }
  };
  const commandSection = (command: Command, path: string[]): string[] => {
    const lines = [
      `${path.length > 1 ? '###' : '##'} patchbay ${path.join(' ')}`,
      '',
      help.commandDescription(command),
      '',
      '```sh',
      help.commandUsage(command),
      '```',
      '',
    ];
    const args = help.visibleArguments(command);
    const options = help.visibleOptions(command).filter((option) => option.long !== '--help');
    if (args.length + options.length > 0) {
      lines.push('| Argument or option | Meaning |', '| --- | --- |');
      for (const arg of args) {
        lines.push(`| \`${help.argumentTerm(arg)}\` | ${cell(help.argumentDescription(arg))} |`);
      }
      for (const option of options) {
        lines.push(`| \`${help.optionTerm(option)}\` | ${cell(help.optionDescription(option))} |`);
      }
      lines.push('');
    }
    return lines;
  };
  visit(program, []);
  return [
    '# CLI reference',
    '',
    '`patchbay` (`node dist/src/main.js` in a checkout) runs the service and administers it. Every command reads',
    'the same [configuration](configuration.md) as the service. Exit codes: 0 success, 1 failure (the message on',
    'standard error), 2 usage error. `patchbay help COMMAND` prints the same help as below.',
    '',
    '<!-- Generated from the command definitions in src/cli/ by `npm run docs`; a test fails when this page differs. -->',
    '',
    ...sections,
  ].join('\n');
}

/** Markdown table cells: a pipe would end the cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
