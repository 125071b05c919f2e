import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MAX_IMAGE_BYTES, sniffImage } from '../../src/features/files/common/images';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const sha = (b: Uint8Array) => 'sha256:' + createHash('sha256').update(b).digest('hex');
const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** 1×1 images as their encoders write them (JPEG: SOI, a JFIF APP0 segment and EOI). */
const IMAGES: Record<string, { bytes: Uint8Array; mime: string }> = {
  'pixel.png': { bytes: b64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), mime: 'image/png' },
  'pixel.gif': { bytes: b64('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=='), mime: 'image/gif' },
  'pixel.webp': { bytes: b64('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='), mime: 'image/webp' },
  'photo.jpg': { bytes: new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9]), mime: 'image/jpeg' },
  // A PNG whose name lies: the bytes decide.
  'screenshot.dat': { bytes: b64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), mime: 'image/png' },
};

describe('read: images come back as MCP image content', () => {
  let base: string;
  let h: Harness;
  const bigPng = new Uint8Array(MAX_IMAGE_BYTES + 1);
  bigPng.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

  before(async () => {
    const files: Record<string, Uint8Array | string> = {};
    for (const [name, { bytes }] of Object.entries(IMAGES)) files[`proj/${name}`] = bytes;
    files['proj/fake.png'] = 'not an image at all\n';
    files['proj/binary.png'] = new Uint8Array([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00]);
    files['proj/huge.png'] = bigPng;
    base = await makeTree(files, 'codespace-image-');
    h = await connectHarness([{ root: path.join(base, 'proj'), name: 'proj', profile: 'read-only' }]);
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  for (const [name, { bytes, mime }] of Object.entries(IMAGES)) {
    it(`${name}: an image block (${mime}) after a JSON text block with path, version, size and mime, no base64`, async () => {
      const r = (await h.call('read', { workspace_id: 'proj', path: name })) as CallToolResult;
      assert.equal(r.isError, undefined);
      assert.equal(r.content.length, 2);
      const [textBlock, image] = r.content;
      assert.equal(image?.type, 'image');
      if (image?.type !== 'image' || textBlock?.type !== 'text') return;
      assert.equal(image.mimeType, mime);
      assert.deepEqual(new Uint8Array(Buffer.from(image.data, 'base64')), bytes);
      const expected = { path: name, version: sha(bytes), size: bytes.length, mime, truncated: false, dirty_in_editor: false };
      assert.deepEqual(r.structuredContent, expected);
      assert.deepEqual(JSON.parse(textBlock.text), expected);
      assert.ok(!textBlock.text.includes(image.data), 'the text block does not repeat the base64');
    });
  }

  it('a .png that is text reads as text; a .png that is other binary is NOT_TEXT as before', async () => {
    const text = ok<{ content: string; mime?: string }>(await h.call('read', { workspace_id: 'proj', path: 'fake.png' }));
    assert.equal(text.content, 'not an image at all\n');
    assert.equal(text.mime, undefined);
    const bin = toolError(await h.call('read', { workspace_id: 'proj', path: 'binary.png' }));
    assert.equal(bin.code, 'NOT_TEXT');
  });

  it('an image over 5 MiB is TOO_LARGE with its size, mime and the limit', async () => {
    const e = toolError(await h.call('read', { workspace_id: 'proj', path: 'huge.png' }));
    assert.equal(e.code, 'TOO_LARGE');
    assert.deepEqual({ size: e.details?.size, mime: e.details?.mime, limit: e.details?.limit }, { size: MAX_IMAGE_BYTES + 1, mime: 'image/png', limit: MAX_IMAGE_BYTES });
  });

  it('line ranges are refused for an image', async () => {
    const e = toolError(await h.call('read', { workspace_id: 'proj', path: 'pixel.png', start_line: 2 }));
    assert.equal(e.code, 'INVALID_ARGUMENTS');
  });

  it('sniffing needs the whole signature', () => {
    assert.equal(sniffImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47])), undefined);
    assert.equal(sniffImage(new TextEncoder().encode('RIFF0000WAVE')), undefined);
    assert.equal(sniffImage(new TextEncoder().encode('GIF88a')), undefined);
    assert.equal(sniffImage(new Uint8Array([0xff, 0xd8])), undefined);
  });
});
