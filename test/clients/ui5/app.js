// Browser side of the UI5 client test: served as /ui5test/app.js next to the UI5 bootstrap. It exposes
// `window.ui5Api` (functions the Node side calls through page.evaluate) once the Core is ready, and
// `window.ui5Ready` (a promise of the UI5 version). Every function takes and returns plain JSON so that
// Playwright can carry it across.
/* global sap */
(function () {
  'use strict';
  const config = window.ui5TestConfig;

  window.ui5Ready = new Promise(function (resolve, reject) {
    sap.ui.require(
      ['sap/ui/core/Core'],
      function (Core) {
        Core.ready().then(function () {
          sap.ui.require(
            [
              'sap/ui/model/odata/v4/ODataModel',
              'sap/ui/model/Sorter',
              'sap/ui/model/Filter',
              'sap/ui/model/FilterOperator',
              'sap/ui/core/Messaging',
              'sap/m/List',
              'sap/m/StandardListItem',
            ],
            function (ODataModel, Sorter, Filter, FilterOperator, Messaging, List, StandardListItem) {
              window.ui5Api = makeApi({
                ODataModel,
                Sorter,
                Filter,
                FilterOperator,
                Messaging,
                List,
                StandardListItem,
              });
              resolve(sap.ui.version);
            },
            reject,
          );
        }, reject);
      },
      reject,
    );
  });

  function makeApi(ui5) {
    const models = new Map();
    const contextBindings = new Map();
    let nextId = 0;

    // One model per name; `groupId` unset keeps UI5's defaults ($auto for reads and writes: all via $batch).
    function model(name, groupId) {
      let m = models.get(name);
      if (m === undefined) {
        const settings = {
          serviceUrl: config.serviceUrl,
          httpHeaders: { API_KEY: config.key },
          // filters and sorters on a list binding need the server to apply them
          operationMode: 'Server',
        };
        if (groupId !== undefined) {
          settings.groupId = groupId;
          settings.updateGroupId = groupId;
        }
        m = new ui5.ODataModel(settings);
        models.set(name, m);
      }
      return m;
    }

    function sorters(list) {
      return (list || []).map(function (s) {
        return new ui5.Sorter(s.path, s.descending === true);
      });
    }
    function filters(list) {
      return (list || []).map(function (f) {
        return new ui5.Filter(f.path, ui5.FilterOperator[f.operator], f.value1);
      });
    }

    // UI5's errors carry the HTTP status and the OData error of the failed request (or $batch part).
    function describeError(error) {
      return {
        message: String(error && error.message),
        status: error && typeof error.status === 'number' ? error.status : null,
        code: error && error.error && error.error.code !== undefined ? String(error.error.code) : null,
        canceled: error && error.canceled === true,
      };
    }

    function messages() {
      return ui5.Messaging.getMessageModel()
        .getObject('/')
        .map(function (m) {
          return {
            type: m.getType(),
            message: m.getMessage(),
            technical: m.getTechnical(),
            code: m.getCode() === undefined ? null : String(m.getCode()),
          };
        });
    }

    return {
      // a plain read of the service document's $metadata: proves the model can reach the service
      metadata: async function (options) {
        const m = model(options.model, options.groupId);
        const container = await m.getMetaModel().requestObject('/');
        return Object.keys(container).filter(function (k) {
          return !k.startsWith('$');
        });
      },

      // bindList + requestContexts page by page, like a growing table does
      readList: async function (options) {
        const m = model(options.model, options.groupId);
        const parameters = { $count: true };
        if (options.select) parameters.$select = options.select;
        const binding = m.bindList(options.path, null, sorters(options.sorters), filters(options.filters), parameters);
        const pages = [];
        try {
          for (let i = 0; i < options.pages; i++) {
            const contexts = await binding.requestContexts(i * options.pageSize, options.pageSize);
            pages.push(
              contexts.map(function (c) {
                return c.getObject();
              }),
            );
          }
          const count = await binding.getHeaderContext().requestProperty('$count');
          return { count: count, pages: pages };
        } finally {
          binding.destroy();
        }
      },

      // a grouped, aggregated list: bindList with the $$aggregation binding parameter (UI5 derives $apply from it,
      // with a concat(aggregate($count as UI5__count),top(n)) for the count), its first `length` groups
      readAggregated: async function (options) {
        const m = model(options.model, options.groupId);
        const binding = m.bindList(options.path, null, sorters(options.sorters), filters(options.filters), {
          $count: true,
          $$aggregation: options.aggregation,
        });
        try {
          const contexts = await binding.requestContexts(0, options.length);
          const count = await binding.getHeaderContext().requestProperty('$count');
          return {
            count: count,
            rows: contexts.map(function (c) {
              return c.getObject();
            }),
          };
        } finally {
          binding.destroy();
        }
      },

      // reads one entity through a context binding and keeps the binding for later edits
      readEntity: async function (options) {
        const m = model(options.model, options.groupId);
        const binding = m.bindContext(options.path);
        const object = await binding.getBoundContext().requestObject();
        const id = 'b' + nextId++;
        contextBindings.set(id, binding);
        return { id: id, object: object };
      },

      // Context#setProperty for each edit, all in the same task so that they share one $batch; with `submit` that
      // group is sent at once. UI5 sends a lone change as a plain part, two or more in a change set.
      edit: async function (options) {
        ui5.Messaging.removeAllMessages();
        const edits = options.edits.map(function (e) {
          const binding = contextBindings.get(e.id);
          const context = binding.getBoundContext();
          return {
            binding: binding,
            context: context,
            property: e.property,
            done: context.setProperty(e.property, e.value),
          };
        });
        if (options.submit) edits[0].binding.getModel().submitBatch(options.submit);
        const results = [];
        for (const e of edits) {
          try {
            await e.done;
            results.push({ ok: true, error: null, value: e.context.getProperty(e.property) });
          } catch (error) {
            results.push({ ok: false, error: describeError(error), value: e.context.getProperty(e.property) });
          }
        }
        return {
          results: results,
          pendingChanges: edits[0].binding.getModel().hasPendingChanges(),
          messages: messages(),
        };
      },

      // a rendered sap.m.List, growing by `pageSize` items, bound to the same kind of query as readList
      renderList: async function (options) {
        const m = model(options.model, options.groupId);
        const list = new ui5.List({
          growing: true,
          growingThreshold: options.pageSize,
          items: {
            path: options.path,
            sorter: sorters(options.sorters),
            filters: filters(options.filters),
            parameters: { $count: true },
            template: new ui5.StandardListItem({ title: '{' + options.titlePath + '}' }),
          },
        });
        list.setModel(m);
        const updated = new Promise(function (resolve) {
          list.attachEventOnce('updateFinished', resolve);
        });
        list.placeAt('content');
        await updated;
        const rendered = await new Promise(function (resolve) {
          // the DOM is written after the binding's change: wait for a rendering round
          setTimeout(function () {
            const dom = list.getDomRef();
            resolve(
              dom === null
                ? []
                : Array.from(dom.querySelectorAll('li.sapMLIB .sapMSLITitleOnly, li.sapMLIB .sapMSLITitle')).map(
                    function (e) {
                      return e.textContent;
                    },
                  ),
            );
          }, 50);
        });
        const result = {
          titles: list.getItems().map(function (item) {
            return item.getTitle();
          }),
          rendered: rendered,
          growingInfo: list.getGrowingInfo(),
        };
        list.destroy();
        return result;
      },

      messages: messages,
    };
  }
})();
