// pushctl's human-readable output: one table layout for every listing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTable } from '../../producers/cli/format.js';

describe('formatTable (pushctl list, schedule list)', () => {
  it('pads each column to its widest cell, with no trailing blanks', () => {
    assert.equal(formatTable([['ID', 'STATE', 'NAME'], ['c-1', 'running', 'Sale'], ['c-22', 'completed', '']]),
      'ID    STATE      NAME\nc-1   running    Sale\nc-22  completed\n');
  });
});
