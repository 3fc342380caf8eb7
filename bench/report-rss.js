// Preloaded with --import into a measured process: prints its peak RSS on exit.
process.on('exit', () => {
  process.stderr.write(`maxRssKb=${process.resourceUsage().maxRSS}\n`);
});
