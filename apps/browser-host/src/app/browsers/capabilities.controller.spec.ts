import { CapabilitiesController } from './capabilities.controller';
import { FakeProcesses, SETTINGS } from './testing/fake-browser-host';

describe('GET /internal/capabilities', () => {
  it('reports the screen and headed mode of the adapter, and a live view only when the console serves one', () => {
    const processes = new FakeProcesses();
    processes.capabilities = () => ({ screen: true, liveView: true, headedMode: 'display' });
    expect(new CapabilitiesController(processes, SETTINGS).capabilities()).toEqual({ screen: true, liveView: false, headedMode: 'display' });
    expect(new CapabilitiesController(processes, { ...SETTINGS, liveView: true }).capabilities()).toEqual({
      screen: true,
      liveView: true,
      headedMode: 'display',
    });
  });
});
