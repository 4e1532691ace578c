// The byte code view's pure parts (src/interpreterCodeModel.ts).
import * as assert from 'assert';
import { codeDocumentName, currentLine, frameIdOf } from '../../src/interpreterCodeModel';

describe('interpreterCodeModel', () => {
  it('takes the frame from the call stack element, and nothing else', () => {
    assert.strictEqual(frameIdOf({ sessionId: 's', threadId: 1, frameId: 7 }), 7);
    assert.strictEqual(frameIdOf('file:///w/helper.R'), undefined);  // older VS Code: the source URI
    assert.strictEqual(frameIdOf({ frameId: '7' }), undefined);
    assert.strictEqual(frameIdOf(undefined), undefined);
  });
  it('names the document after the function and the code format', () => {
    assert.strictEqual(codeDocumentName({ function: 'accumulate', format: 'R byte code version 12', text: '' }),
      'accumulate (R byte code version 12).txt');
    assert.strictEqual(codeDocumentName({ function: 'a/b', text: '' }), 'a_b.txt');
  });
  it('finds the current instruction\'s line', () => {
    const text = 'accumulate — R byte code version 12\n\n     line  offset  instruction\n' +
      '      4       1  GETVAR 1\n=>    5       3  LDCONST 2\n';
    assert.strictEqual(currentLine({ function: 'accumulate', text, currentOffset: 3 }), 4);
    assert.strictEqual(currentLine({ function: 'accumulate', text }), undefined);
  });
});
