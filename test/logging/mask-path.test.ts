import { describe, expect, it } from 'vitest';
import { maskedInboundPath, maskPath } from '../../src/logging/logger.js';

describe('request paths in the log', () => {
  it('hide all but the start of an inbound key, and drop the query', () => {
    expect(maskPath('/api/inbound/AbC1dEf2gHi3jKl4?secret=s3cr3t')).toBe('/api/inbound/AbC1…');
    expect(maskPath('/api/inbound/AbC1dEf2gHi3jKl4/more')).toBe('/api/inbound/AbC1…/more');
    expect(maskedInboundPath('AbC1dEf2gHi3jKl4')).toBe('/api/inbound/AbC1…');
  });

  it('mask a key with a malformed percent-encoding instead of failing', () => {
    expect(maskPath('/api/inbound/%E0%A4%A')).toBe('/api/inbound/****');
    expect(maskPath('/api/inbound/%E0%A4%AbC1dEf2gHi3')).toBe('/api/inbound/%E0%…');
  });

  it('leave other paths as they are, without their query', () => {
    expect(maskPath('/api/admin/sources?limit=5')).toBe('/api/admin/sources');
  });
});
