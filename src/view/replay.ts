// The replay page (dist/replay.js, served by the host at /replay/assets/replay.js): a recording in
// asciinema-player, with its own controls (play/pause, the progress bar to seek, markers on it)
// and ours: a speed choice, a list of the markers, and opening a file from this computer (read
// here with the File API; nothing is uploaded). The host names a recording in `data-cast`.
import { create, type Player } from 'asciinema-player';
import { clock, forPlayer, outlineCast, type CastOutline } from './cast-outline';

/** What the page is doing. */
type ReplayState = 'empty' | 'loading' | 'ready' | 'playing' | 'paused' | 'ended' | 'error';

declare global {
  interface Window {
    /** The replayer, for end-to-end tests. */
    __sharedPtyReplay?: { state: () => ReplayState; speed: () => number; player: () => Player | undefined; markers: () => number };
  }
}

function start(): void {
  const container = document.getElementById('player');
  const statusLabel = document.getElementById('status');
  const nameLabel = document.getElementById('name');
  const fileInput = document.getElementById('file') as HTMLInputElement | null;
  const speedSelect = document.getElementById('speed') as HTMLSelectElement | null;
  const drop = document.getElementById('drop');
  const markersPanel = document.getElementById('markers-panel');
  const markersList = document.getElementById('markers');
  if (!container || !speedSelect) return;

  let state: ReplayState = 'empty';
  let player: Player | undefined;
  let recording: { text: string; name: string; outline: CastOutline } | undefined;
  let speed = Number(speedSelect.value) || 1;
  /** Counts mounts: what an older player's promise resolves to is stale. */
  let generation = 0;

  const setStatus = (text: string, next: ReplayState) => {
    state = next;
    if (!statusLabel) return;
    statusLabel.textContent = text;
    statusLabel.className = next === 'error' ? 'status status-error' : 'status';
  };
  window.__sharedPtyReplay = { state: () => state, speed: () => speed, player: () => player, markers: () => recording?.outline.markers.length ?? 0 };

  /** A new player for the recording at `speed`, at `at` seconds, playing if `play`. The player's speed is fixed at creation. */
  async function mount(at: number, play: boolean): Promise<void> {
    if (!recording) return;
    const gen = ++generation;
    player?.dispose();
    container!.replaceChildren();
    const p = create({ data: forPlayer(recording.text, recording.outline) }, container!, {
      speed,
      idleTimeLimit: recording.outline.idleTimeLimit,
      preload: true,
      fit: 'width',
      terminalFontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace',
    });
    player = p;
    const ifCurrent = (fn: () => void) => () => gen === generation && fn();
    p.addEventListener(
      'play',
      ifCurrent(() => setStatus(`playing at ${speed}×`, 'playing')),
    );
    p.addEventListener(
      'playing',
      ifCurrent(() => setStatus(`playing at ${speed}×`, 'playing')),
    );
    p.addEventListener(
      'pause',
      ifCurrent(() => setStatus('paused', 'paused')),
    );
    p.addEventListener(
      'ended',
      ifCurrent(() => setStatus('ended', 'ended')),
    );
    if (at > 0) await p.seek(at);
    if (play) await p.play();
    if (gen === generation && state === 'loading') setStatus('ready: press play (space)', 'ready');
  }

  function showMarkers(outline: CastOutline): void {
    if (!markersList || !markersPanel) return;
    markersList.replaceChildren(
      ...outline.markers.map((m, index) => {
        const item = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        const time = document.createElement('span');
        time.className = 'time';
        time.textContent = clock(m.time);
        button.append(time, m.label);
        button.title = `Go to ${clock(m.time)}`;
        button.addEventListener('click', () => {
          const p = player;
          // The player fires no pause for a seek: past the end (or before the start) it would still say so.
          void p?.seek({ marker: index }).then(() => {
            if (p === player && (state === 'ended' || state === 'ready')) setStatus(`paused at ${clock(m.time)}: ${m.label}`, 'paused');
          });
        });
        item.append(button);
        return item;
      }),
    );
    markersPanel.hidden = outline.markers.length === 0;
  }

  async function load(text: string, name: string): Promise<void> {
    let outline: CastOutline;
    try {
      outline = outlineCast(text, name);
    } catch (e) {
      return setStatus((e as Error).message, 'error');
    }
    recording = { text, name, outline };
    document.title = `${name} — Shared PTY replay`;
    if (nameLabel) nameLabel.textContent = name;
    if (drop) drop.hidden = true;
    showMarkers(outline);
    setStatus('loading…', 'loading');
    try {
      await mount(0, false);
    } catch (e) {
      setStatus(`cannot replay ${name}: ${(e as Error).message}`, 'error');
    }
  }

  async function loadFile(file: File): Promise<void> {
    setStatus('reading…', 'loading');
    try {
      await load(await file.text(), file.name);
    } catch (e) {
      setStatus(`cannot read ${file.name}: ${(e as Error).message}`, 'error');
    }
  }

  speedSelect.addEventListener('change', () => {
    const next = Number(speedSelect.value);
    if (!(next > 0) || next === speed) return;
    speed = next;
    if (!player) return;
    const at = player.getCurrentTime();
    const playing = state === 'playing';
    setStatus(playing ? `playing at ${speed}×` : `speed ${speed}×`, playing ? 'playing' : state === 'ended' ? 'paused' : state);
    void mount(typeof at === 'number' ? at : 0, playing).catch((e) => setStatus(`cannot replay: ${(e as Error).message}`, 'error'));
  });

  fileInput?.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) void loadFile(file);
  });
  // Drop a file anywhere on the page.
  document.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    document.body.classList.add('dragging');
  });
  document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
  document.addEventListener('drop', (ev) => {
    ev.preventDefault();
    document.body.classList.remove('dragging');
    const file = ev.dataTransfer?.files?.[0];
    if (file) void loadFile(file);
  });

  const cast = document.body.dataset.cast;
  if (!cast) return;
  const name = document.body.dataset.name || 'recording';
  setStatus('loading…', 'loading');
  void (async () => {
    try {
      const r = await fetch(cast, { cache: 'no-store', credentials: 'same-origin' });
      const text = await r.text();
      if (!r.ok) {
        let message = `${r.status} ${r.statusText}`;
        try {
          message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
        } catch {
          // not our JSON error: the status says enough
        }
        return setStatus(message, 'error');
      }
      await load(text, name);
    } catch (e) {
      setStatus(`cannot load ${name}: ${(e as Error).message}`, 'error');
    }
  })();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
