import { describe, expect, it } from 'vitest';
import { maskedInboundPath, maskPath } from '../../src/logging/logger.js';

describe('request paths in the log', () => {
  it('hide all but the start of an inbound key, and drop the query', () => {
    expect(maskPath('/api/inbound/AbC1dEf2gHi3jKl4?secret=s3cr3t')).toBe('/api/inbound/AbC1…');
    expect(maskPath('/api/inbound/AbC1dEf2gHi3jKl4/more')).toBe('/api/inbound/AbC1…/****');
    expect(maskedInboundPath('AbC1dEf2gHi3jKl4')).toBe('/api/inbound/AbC1…');
  });

  it('mask a key with a malformed percent-encoding instead of failing', () => {
    expect(maskPath('/api/inbound/%E0%A4%A')).toBe('/api/inbound/****');
    expect(maskPath('/api/inbound/%E0%A4%AbC1dEf2gHi3')).toBe('/api/inbound/%E0%…');
  });

  it('hide keys in mistyped inbound paths and keys pasted into other paths', () => {
    const key = 'v9hCBcgkGu_dxpgewpsaUqTRSyj9_hq1';
    expect(maskPath(`/api//inbound/${key}`)).toBe('/api//inbound/v9hC…');
    expect(maskPath(`/API/INBOUND/${key}`)).toBe('/API/INBOUND/v9hC…');
    expect(maskPath(`/api/%69nbound/${key}/`)).toBe('/api/%69nbound/v9hC…/');
    expect(maskPath(`/api/inbound/x/../${key}`)).toBe('/api/inbound/****/../v9hC…');
    expect(maskPath(`/inbound/${key}`)).toBe('/inbound/v9hC…');
    expect(maskPath(`/api/${key}`)).toBe('/api/v9hC…');
    expect(maskPath(`/${key}?secret=x`)).toBe('/v9hC…');
  });

  it('hide any segment the caller knows to be a secret', () => {
    expect(maskPath('/api/admin/tok-12345/usage', (segment) => segment === 'tok-12345')).toBe('/api/admin/tok-…/usage');
  });

  it('leave record ids in place', () => {
    expect(maskPath('/api/admin/signals/sig_0mwsmsjku00001a2b3c4d')).toBe(
      '/api/admin/signals/sig_0mwsmsjku00001a2b3c4d',
    );
    expect(maskPath('/api/admin/sources/src_0123456789abcdef0123/rotate-key')).toBe(
      '/api/admin/sources/src_0123456789abcdef0123/rotate-key',
    );
  });

  it('leave other paths as they are, without their query', () => {
    expect(maskPath('/api/admin/sources?limit=5')).toBe('/api/admin/sources');
  });
});
