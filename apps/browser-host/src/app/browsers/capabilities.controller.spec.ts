import { CapabilitiesController } from './capabilities.controller';
import { FakeProcesses } from './testing/fake-browser-host';

describe('GET /internal/capabilities', () => {
  it('reports the screen and headed mode of the adapter, and no live view until a relay serves one', () => {
    const processes = new FakeProcesses();
    processes.capabilities = () => ({ screen: true, liveView: true, headedMode: 'display' });
    expect(new CapabilitiesController(processes).capabilities()).toEqual({ screen: true, liveView: false, headedMode: 'display' });
  });
});
