// pushctl's command line, built from its one command table (producers/pushctl.js) on
// commander: each command's own --help, `pushctl help [command]`, --version, a
// did-you-mean for misspelt commands and options, and refusal of any option or argument
// a command does not take. This file only parses and dispatches.
import { Command, CommanderError, Option } from 'commander';

/**
 * @typedef {object} OptionSpec
 * @property {string} flags          as commander writes them: '--audience <file>', '-y, --yes'
 * @property {string} description
 * @property {string[]} [conflicts]  options it cannot be given with (their camelCase names)
 *
 * @typedef {{ args: (string | undefined)[], options: Record<string, any> }} Parsed
 *   what a command is given: its arguments in order, and its options by camelCase name
 *
 * @typedef {object} CommandSpec
 * @property {string} name      'send', or 'schedule add' for a command of a group
 * @property {string} summary   its line in the list of commands
 * @property {string} [args]    its arguments: '<campaign-id>', '[rate]'
 * @property {(string | [string, string])[]} [options]  names in the options table; [name, text] to
 *   describe one differently for this command
 * @property {string} [details] said after its options in its --help
 * @property {(parsed: Parsed) => Promise<number>} [run]  none for a group ('schedule', 'db')
 */

/**
 * Parses `argv` and runs the command it names; resolves the exit code. --help and
 * --version exit 0; bad usage 2, once commander has said what was wrong. A command's own
 * errors reject, for the entry file to report.
 * @param {string[]} argv
 * @param {object} cli
 * @param {CommandSpec[]} cli.commands   groups before their commands
 * @param {Record<string, OptionSpec>} cli.options
 * @param {string} cli.description
 * @param {string} cli.epilogue          after the list of commands in pushctl --help
 * @param {string} cli.version
 * @param {{ stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream }} cli.io
 * @returns {Promise<number>}
 */
export async function runCommandLine(argv, { commands, options, description, epilogue, version, io }) {
  let exitCode = 0;
  // Settings made before .command() are inherited by every command created after.
  const program = new Command('pushctl')
    .description(description)
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // One voice with pushctl's own errors: "pushctl: unknown option '--audiance'".
      outputError: (text, write) => write(text.replace(/^error: /, 'pushctl: '))
    })
    .showHelpAfterError('(pushctl --help lists the commands)')
    .addHelpText('after', `\n${epilogue}`);
  program.helpCommand('help [command]', 'show the help of a command');

  for (const spec of commands) {
    const words = spec.name.split(' ');
    const parent = words.slice(0, -1).reduce((group, word) => findCommand(group, word), program);
    const command = parent.command(words.at(-1) ?? spec.name).description(spec.summary)
      .showHelpAfterError(`(pushctl ${spec.name} --help shows its usage)`);
    if (spec.args) command.arguments(spec.args);
    for (const entry of spec.options ?? []) {
      const [name, text] = typeof entry === 'string' ? [entry, undefined] : entry;
      const option = options[name];
      if (!option) throw new Error(`pushctl's command table: ${spec.name} names an unknown option "${name}"`);
      const made = new Option(option.flags, text ?? option.description);
      if (option.conflicts) made.conflicts(option.conflicts);
      command.addOption(made);
    }
    if (spec.details) command.addHelpText('after', `\n${spec.details}`);
    const run = spec.run;
    if (run) {
      command.action(async (...given) => {
        const self = /** @type {Command} */ (given.at(-1));
        exitCode = await run({ args: self.processedArgs, options: self.opts() });
      });
    }
  }

  // commander's help command looks up one name; `pushctl help schedule add` asks for the
  // same as `pushctl schedule add --help`, which reaches any depth. An unknown name is
  // left to be refused as an unknown command, with its suggestion.
  const helpOf = argv[0] === 'help' ? argv.slice(1) : [];
  const known = helpOf.length > 0 && program.commands.some((command) => command.name() === helpOf[0]);
  const words = helpOf.length === 0 ? argv : known ? [...helpOf, '--help'] : helpOf.slice(0, 1);
  try {
    await program.parseAsync(words, { from: 'user' });
  } catch (error) {
    // Help and --version "exit" 0; everything commander refuses is bad usage.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  return exitCode;
}

/** @param {Command} group @param {string} name */
function findCommand(group, name) {
  const found = group.commands.find((command) => command.name() === name);
  if (!found) throw new Error(`pushctl's command table: "${name}" must come before its commands`);
  return found;
}
