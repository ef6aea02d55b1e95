/**
 * The page script's DOM-free parts (`shared/console/client/logic.ts`) and
 * the nodes both renderers build from (`shared/console/nodes.ts`,
 * `blocks.ts`): what a live view asks of a page, what a failed read says,
 * and which tags and attributes may ever reach a page.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockNode, resultNodes } from '../../../shared/console/blocks.ts';
import { ended, interval, readProblem, taskStep } from '../../../shared/console/client/logic.ts';
import { attributeAllowed, el, tagAllowed } from '../../../shared/console/nodes.ts';

describe('the page script: decisions', () => {
  it('reads again until the task ends; a question without a form reloads, unless the person is typing', () => {
    const cases: Array<[string, string[], string[], boolean, { reload: boolean; notice: boolean; again: boolean }]> = [
      ['working', [], [], false, { reload: false, notice: false, again: true }],
      ['input_required', ['a'], ['a'], false, { reload: false, notice: false, again: true }],
      ['input_required', ['a', 'b'], ['a'], false, { reload: true, notice: false, again: false }],
      ['input_required', ['b'], ['a'], true, { reload: false, notice: true, again: true }],
      ['completed', [], ['a'], false, { reload: false, notice: false, again: false }],
      ['failed', [], [], true, { reload: false, notice: false, again: false }],
      ['cancelled', [], [], false, { reload: false, notice: false, again: false }],
    ];
    for (const [status, questions, shown, typing, expected] of cases) {
      assert.deepEqual(
        taskStep({ status: status as never, questions }, shown, typing),
        expected,
        `${status} ${questions} ${shown} ${typing}`,
      );
    }
    assert.equal(ended('working'), false);
    assert.equal(ended(undefined), false);
    assert.equal(ended('completed'), true);
  });

  it('takes a poll interval only when it is a positive number', () => {
    assert.equal(interval('2500', 1000), 2500);
    assert.equal(interval(800, 1000), 800);
    for (const bad of [undefined, '', 'soon', 0, -5, Number.NaN, Number.POSITIVE_INFINITY])
      assert.equal(interval(bad, 1000), 1000, String(bad));
  });

  it('says why updates stopped, and keeps trying only when the server could not be reached', () => {
    assert.deepEqual(readProblem(401), { text: 'Your session ended: reload the page to sign in again.', again: false });
    assert.deepEqual(readProblem(404), { text: 'This task is gone.', again: false });
    assert.equal(readProblem(undefined).again, true);
    assert.equal(readProblem(502).again, true);
  });
});

describe('nodes', () => {
  it('allow a short list of tags and attributes; links only to http(s) or the console, media only as data: URLs', () => {
    assert.equal(tagAllowed('pre'), true);
    for (const tag of ['script', 'iframe', 'style', 'object', 'form', 'input', 'SCRIPT', 42])
      assert.equal(tagAllowed(tag), false, String(tag));
    // The timeline's picture draws shapes and text; nothing of SVG that loads, links, animates or embeds.
    for (const tag of ['svg', 'g', 'rect', 'line', 'text']) assert.equal(tagAllowed(tag), true, tag);
    for (const tag of ['foreignObject', 'use', 'image', 'animate', 'set', 'feImage', 'a:href']) assert.equal(tagAllowed(tag), false, tag);
    for (const name of ['xlink:href', 'href:', 'onload', 'begin']) assert.equal(attributeAllowed(name, 'x'), false, name);
    assert.equal(attributeAllowed('href', 'https://example.com/x'), true);
    assert.equal(attributeAllowed('href', '/console/tasks/abc'), true);
    for (const href of ['javascript:alert(1)', ' javascript:alert(1)', 'data:text/html,x', '//evil.example', '/consolex', true as const])
      assert.equal(attributeAllowed('href', href), false, String(href));
    assert.equal(attributeAllowed('src', 'data:image/png;base64,iVBORw0K'), true);
    assert.equal(attributeAllowed('src', 'https://example.com/x.png'), false, 'no outside assets');
    assert.equal(attributeAllowed('src', 'data:text/html;base64,PHNjcmlwdD4='), false);
    for (const name of ['onclick', 'onerror', 'style', 'srcdoc', 'formaction']) assert.equal(attributeAllowed(name, 'x'), false, name);
  });

  it('leave out empty attributes and absent children', () => {
    assert.deepEqual(el('p', {}, undefined, 'a', false), { tag: 'p', children: ['a'] });
    assert.deepEqual(el('span', { class: 'x' }), { tag: 'span', attrs: { class: 'x' } });
  });

  it('draw every kind of result block, task text only ever as text', () => {
    assert.deepEqual(blockNode({ kind: 'text', text: '<b>hi</b>' }), { tag: 'p', attrs: { class: 'text' }, children: ['<b>hi</b>'] });
    assert.deepEqual(blockNode({ kind: 'link', text: 'x', target: 'javascript:alert(1)' }), {
      tag: 'p',
      children: ['x (javascript:alert(1))'],
    });
    assert.deepEqual(blockNode({ kind: 'link', text: 'docs', target: 'https://e.x/', href: 'https://e.x/' }), {
      tag: 'p',
      children: [{ tag: 'a', attrs: { href: 'https://e.x/', rel: 'noopener noreferrer nofollow' }, children: ['docs'] }],
    });
    assert.deepEqual(blockNode({ kind: 'image', src: 'data:image/png;base64,AA==', alt: 'Image' }), {
      tag: 'img',
      attrs: { src: 'data:image/png;base64,AA==', alt: 'Image' },
    });
    assert.deepEqual(blockNode({ kind: 'audio', src: 'data:audio/wav;base64,AA==' }), {
      tag: 'audio',
      attrs: { controls: true, src: 'data:audio/wav;base64,AA==' },
    });
    assert.deepEqual(resultNodes({ isError: false, blocks: [{ kind: 'json', label: 'L', text: '{}' }] }), [
      {
        tag: 'figure',
        children: [
          { tag: 'figcaption', children: ['L'] },
          { tag: 'pre', children: ['{}'] },
        ],
      },
    ]);
  });
});
