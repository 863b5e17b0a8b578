export interface SetupView {
  /** The base32 secret, for typing in by hand. */
  secret: string;
  /** The otpauth:// address as an inline SVG QR code, drawn here: no image leaves the server. */
  qrSvg: string;
}

/** What the setup page shows: the QR code of `uri` and the secret it holds. */
export async function toSetupView(setup: { secret: string; uri: string }): Promise<SetupView> {
  // Loaded when someone first sets two-factor sign-in up: ~1 MB of heap nobody else needs.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(setup.uri, {
    type: 'svg',
    errorCorrectionLevel: 'M',
    margin: 2,
  });
  const labelled = svg.replace(
    '<svg ',
    '<svg role="img" aria-label="QR code for your authenticator app" class="qr-code" ',
  );
  return { secret: setup.secret, qrSvg: labelled };
}
