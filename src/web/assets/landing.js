// The landing page's script (a family's calendar page), allowed by its hash in the page's CSP (web/assets.ts).
// Copy buttons. The reminder choice applies only with its Apply button, never on change: a submit on change
// reloaded the page on every arrow key (WCAG 3.2.2), so the script leaves that control alone. The family
// section's scanner reads another child's QR code, from the camera or from a photo, and adds the link it holds
// to the list: with the browser's own BarcodeDetector where it reads QR codes (Chrome on Android, Safari on
// recent iPhones), otherwise with jsQR (served from our own origin, loaded only when needed).
// A block, not a function, holds the parts: its consts stay out of the page's globals (jsQR sets window.jsQR).
// Type-checked through JSDoc (npm run check: tsc -p src/web/assets, strict, the browser's DOM types, and the
// types named here from page.d.ts).
{
  /** What the page may find on window: jsQR once its script has loaded, BarcodeDetector where the browser has it. */
  const page = /** @type {Window & { jsQR?: JsQR, BarcodeDetector?: Detectors }} */ (window);
  /**
   * The element of that id, which the page always has.
   * @template {HTMLElement} T
   * @param {string} id
   * @returns {T}
   */
  const byId = (id) => /** @type {T} */ (document.getElementById(id));

  // Each copy button copies the field it names.
  const copyButtons = () => {
    for (const button of document.querySelectorAll('[data-copy]')) {
      button.addEventListener('click', () => {
        /** @type {HTMLInputElement} */
        const input = byId(button.getAttribute('data-copy') ?? '');
        input.select();
        /** @param {boolean} done */
        const say = (done) => {
          // Never "Copied" unless it was: the address is left selected for the family to copy themselves.
          button.textContent = done ? 'Copied' : 'Not copied: copy it by hand';
        };
        const byCommand = () => {
          try {
            return document.execCommand('copy');
          } catch {
            return false;
          }
        };
        (navigator.clipboard ? navigator.clipboard.writeText(input.value) : Promise.reject()).then(
          () => say(true),
          () => say(byCommand()),
        );
      });
    }
  };

  // decode(source, width, height): the text of the QR code in an image or video frame, or null.
  /** @type {(family: HTMLElement) => Decode} */
  const qrDecoder = (family) => {
    /** @type {Promise<JsQR> | null} */
    let decoder = null;
    const jsQR = () => {
      if (!decoder)
        decoder = new Promise((resolve, reject) => {
          const script = document.createElement('script');
          script.src = family.getAttribute('data-decoder') ?? '';
          script.onload = () => resolve(/** @type {JsQR} */ (page.jsQR));
          script.onerror = () => {
            decoder = null;
            reject(new Error('the QR decoder did not load'));
          };
          document.head.appendChild(script);
        });
      return decoder;
    };

    /** @type {Decode} */
    const viaJsQR = (source, width, height) =>
      jsQR().then((read) => {
        const k = Math.min(1, 1280 / Math.max(width, height));
        const canvas = document.createElement('canvas');
        canvas.width = Math.max(1, Math.round(width * k));
        canvas.height = Math.max(1, Math.round(height * k));
        const context = /** @type {CanvasRenderingContext2D} */ (
          canvas.getContext('2d', { willReadFrequently: true })
        );
        context.drawImage(source, 0, 0, canvas.width, canvas.height);
        const pixels = context.getImageData(0, 0, canvas.width, canvas.height);
        const found = read(pixels.data, canvas.width, canvas.height);
        return found ? found.data : null;
      });

    const Detector = page.BarcodeDetector;
    /** @type {Promise<Detector | null>} */
    const native = Detector
      ? Detector.getSupportedFormats()
          .then((formats) =>
            formats.indexOf('qr_code') >= 0 ? new Detector({ formats: ['qr_code'] }) : null,
          )
          .catch(() => null)
      : Promise.resolve(null);

    return (source, width, height) =>
      native.then((detector) =>
        detector
          ? detector.detect(source).then((codes) => (codes.length ? codes[0].rawValue : null))
          : viaJsQR(source, width, height),
      );
  };

  // add(text): a scanned calendar link joins the family's list once; anything else is refused, saying why.
  /** @type {(family: HTMLTextAreaElement, say: Say) => Add} */
  const linkList = (family, say) => {
    const LINK = /^https?:[/][/][^\s]+[/](feeds|family)[/][A-Za-z0-9_-]{20,}[^\s]*$/;
    return (text) => {
      const url = String(text || '').trim();
      if (!LINK.test(url)) {
        say("That QR code is not a calendar link from a child's page.");
        return;
      }
      const lines = family.value
        .split(/\n/)
        .map((line) => line.trim())
        .filter(Boolean);
      if (lines.indexOf(url) < 0) lines.push(url);
      family.value = lines.join('\n');
      say('Link added. Scan another, or make the family link.');
    };
  };

  /** @type {(photo: HTMLInputElement, decode: Decode, add: Add, say: Say) => void} */
  const photoScanner = (photo, decode, add, say) => {
    /** @type {HTMLElement} */ (photo.parentElement).hidden = false;
    photo.addEventListener('change', () => {
      const file = photo.files?.[0];
      if (!file) return;
      say('Reading the photo\u2026');
      createImageBitmap(file)
        .then((bitmap) => decode(bitmap, bitmap.width, bitmap.height))
        .then(
          (text) => {
            if (text === null) say('No QR code found in that photo: try again, closer and in focus.');
            else add(text);
          },
          (error) => say(`Could not read that photo (${error.message}).`),
        )
        .then(() => {
          photo.value = '';
        });
    });
  };

  // The camera button starts and stops the scan; a frame is read every 250 ms until one holds a QR code.
  /** @type {(camera: HTMLButtonElement, video: HTMLVideoElement, decode: Decode, add: Add, say: Say) => void} */
  const cameraScanner = (camera, video, decode, add, say) => {
    /** @type {MediaStream | null} */
    let stream = null;
    const stop = () => {
      if (stream) {
        for (const track of stream.getTracks()) track.stop();
        stream = null;
      }
      video.hidden = true;
      camera.textContent = 'Scan a QR code';
    };
    const tick = () => {
      if (!stream) return;
      const again = () => {
        if (stream) setTimeout(tick, 250);
      };
      (video.videoWidth ? decode(video, video.videoWidth, video.videoHeight) : Promise.resolve(null)).then(
        (text) => {
          if (text !== null) {
            stop();
            add(text);
          } else again();
        },
        again,
      );
    };
    camera.hidden = false;
    camera.addEventListener('click', () => {
      if (stream) {
        stop();
        return;
      }
      navigator.mediaDevices
        .getUserMedia({ video: { facingMode: 'environment' }, audio: false })
        .then((s) => {
          stream = s;
          video.srcObject = s;
          video.hidden = false;
          camera.textContent = 'Stop scanning';
          say("Point the camera at the QR code on the other child's page.");
          return video.play();
        })
        .then(tick)
        .catch(() => {
          stop();
          say('The camera is not available: use \u201cScan from a photo\u201d, or paste the link.');
        });
    });
  };

  /** @type {(family: HTMLTextAreaElement) => void} */
  const familyScanner = (family) => {
    const status = byId('scan-status');
    /** @type {Say} */
    const say = (message) => {
      status.textContent = message;
    };
    const decode = qrDecoder(family);
    const add = linkList(family, say);
    photoScanner(byId('scan-photo'), decode, add, say);
    // Without a secure context the browser has no mediaDevices at all.
    const media = /** @type {MediaDevices | undefined} */ (navigator.mediaDevices);
    if (media?.getUserMedia) cameraScanner(byId('scan-camera'), byId('scan-video'), decode, add, say);
  };

  copyButtons();
  const family = /** @type {HTMLTextAreaElement | null} */ (document.getElementById('family-links'));
  if (family) familyScanner(family);
}
