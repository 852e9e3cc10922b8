// Types the page script (landing.js) names in its JSDoc, for the checker only: nothing here is sent to a browser.

/** jsQR's one function, as its script sets it on window. */
type JsQR = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;

/** The browser's BarcodeDetector, where it has one (not yet in TypeScript's DOM types). */
interface Detector {
  detect(source: CanvasImageSource): Promise<{ rawValue: string }[]>;
}
interface Detectors {
  new (opts: { formats: string[] }): Detector;
  getSupportedFormats(): Promise<string[]>;
}

/** The text of the QR code in an image or video frame, or null. */
type Decode = (source: CanvasImageSource, width: number, height: number) => Promise<string | null>;
/** Tells the family what the scanner did (its status line). */
type Say = (message: string) => void;
/** Adds a scanned link to the family's list. */
type Add = (text: string) => void;
