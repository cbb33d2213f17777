/**
 * The rules of a project's branding, which the end-user pages show under a strict Content-Security-Policy: a
 * logo must be one the page's `img-src` can name exactly, a colour one that can only ever be a colour in the
 * page's inline style, and the app's address one a browser may be sent to.
 */

export const ACCENT_COLOR = /^#[0-9a-fA-F]{6}$/;
/** A data: logo is part of every page that shows it: 64 KiB of text at most. */
export const LOGO_DATA_URL_MAX = 65_536;
export const URL_MAX = 2048;

/** Raster and SVG images as base64 data: URLs (an SVG shown by <img> runs no script). */
const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp|avif|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why `value` cannot be a project's logo, or null when it can. */
export function logoUrlProblem(value: string): string | null {
  if (value.startsWith('data:')) {
    if (value.length > LOGO_DATA_URL_MAX) {
      return `a data: logo must be at most ${LOGO_DATA_URL_MAX} characters`;
    }
    return DATA_IMAGE.test(value)
      ? null
      : 'a data: logo must be a base64 data:image URL (png, jpeg, gif, webp, avif or svg+xml)';
  }
  if (value.length > URL_MAX) {
    return `the logo URL must be at most ${URL_MAX} characters`;
  }
  const url = URL.parse(value);
  if (!url || url.protocol !== 'https:') {
    return 'the logo must be an https URL or a data:image URL';
  }
  if (url.username || url.password) {
    return 'the logo URL must not carry credentials';
  }
  // The page's CSP names the logo by origin and path: an IPv6 literal or a ';' or ',' in the path cannot be
  // written in a source expression.
  if (url.hostname.startsWith('[') || /[;,\s]/.test(url.pathname)) {
    return 'the logo URL must have a host name and a path without ";" or ","';
  }
  return null;
}

/** The CSP `img-src` source that allows exactly this (valid) logo. */
export function logoImageSource(logo: string): string {
  if (logo.startsWith('data:')) {
    return 'data:';
  }
  const url = new URL(logo);
  return `${url.origin}${url.pathname}`;
}

/** Why `value` cannot be the developer's app address, or null when it can. */
export function homeUrlProblem(value: string): string | null {
  if (value.length > URL_MAX) {
    return `the URL must be at most ${URL_MAX} characters`;
  }
  const url = URL.parse(value);
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))) {
    return 'the URL must be https (or http on a loopback address)';
  }
  if (url.username || url.password) {
    return 'the URL must not carry credentials';
  }
  return null;
}

/** Black or white text on the accent colour, whichever contrasts more (WCAG relative luminance). */
export function textColourOn(accent: string): '#000000' | '#ffffff' {
  const channel = (offset: number) => {
    const c = parseInt(accent.slice(offset, offset + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  // Contrast with white is 1.05 / (L + 0.05); with black (L + 0.05) / 0.05.
  return 1.05 / (luminance + 0.05) >= (luminance + 0.05) / 0.05 ? '#ffffff' : '#000000';
}
