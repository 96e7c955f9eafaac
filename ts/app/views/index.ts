/** Every view of the viewer, in tab order.  A view is a module exporting `create(): View`. */
import type { ViewSpec } from './types';
import * as aicore from './aicore';
import * as analyses from './analyses';
import * as communication from './communication';
import * as compare from './compare';
import * as memory from './memory';
import * as modules from './modules';
import * as operators from './operators';
import * as overview from './overview';
import * as ranks from './ranks';
import * as timeline from './timeline';

export const VIEWS: ViewSpec[] = [
  { id: 'overview', label: 'ui.view.overview', create: overview.create },
  { id: 'operators', label: 'ui.view.operators', create: operators.create },
  { id: 'aicore', label: 'ui.view.aicore', create: aicore.create },
  { id: 'timeline', label: 'ui.view.timeline', create: timeline.create },
  { id: 'modules', label: 'ui.view.modules', create: modules.create },
  { id: 'memory', label: 'ui.view.memory', create: memory.create },
  { id: 'communication', label: 'ui.view.communication', create: communication.create },
  { id: 'ranks', label: 'ui.view.ranks', create: ranks.create },
  { id: 'compare', label: 'ui.view.compare', create: compare.create },
  { id: 'analyses', label: 'ui.view.analyses', create: analyses.create }
];
