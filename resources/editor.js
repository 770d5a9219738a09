/*
 * Editor code shared by the ipcam nodes' dialogs: checks of a value against the limits that
 * lib/input/params exposes (taken from the generated rules.js, never copied by hand), and the
 * parameter form of an operation. Loaded by each node's .html; a second load is a no-op.
 */
(function () {
    "use strict";
    if (window.IPCAM_EDITOR) { return; }

    // The same numeric rule as lib/input/params: decimal digits, an optional minus, spaces around.
    var NUMERIC = /^\s*-?\d{1,16}\s*$/;
    // And for numbers with a fraction (a frame rate): no exponent, no hex.
    var DECIMAL = /^\s*-?\d{1,16}(\.\d{1,16})?\s*$/;
    var DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
    var CONTROL = { line: /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, value: /[\u0000-\u0008\u000a-\u001f\u007f]/, multiline: /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/ };

    function blank(value) {
        return value === undefined || value === null || String(value).trim() === "";
    }

    /** true, or the reason the value does not fit `limits` (the text a field's tooltip shows). */
    function check(limits, value) {
        if (blank(value)) { return limits.optional ? true : "required"; }
        var text = String(value);
        switch (limits.type) {
        case "int":
            if (!NUMERIC.test(text) || Number(text) < limits.min || Number(text) > limits.max) { return "a whole number from " + limits.min + " to " + limits.max; }
            return true;
        case "number":
            if (!DECIMAL.test(text) || Number(text) < limits.min || Number(text) > limits.max) { return "a number from " + limits.min + " to " + limits.max; }
            return true;
        case "oneOf":
            return limits.values.indexOf(text.trim()) >= 0 ? true : "one of " + limits.values.join(", ");
        case "bool":
            return /^(true|false)$/i.test(text.trim()) ? true : "true or false";
        case "dateTime":
            return DATE_TIME.test(text.trim()) ? true : "a date like 2026-01-31 23:59:59";
        case "idList":
            var ids = text.split(",");
            if (ids.length > limits.maxCount) { return "at most " + limits.maxCount + " ids"; }
            for (var i = 0; i < ids.length; i++) {
                if (!NUMERIC.test(ids[i]) || Number(ids[i]) < limits.min || Number(ids[i]) > limits.max) { return "ids from " + limits.min + " to " + limits.max + ", e.g. 1,2"; }
            }
            return true;
        case "text":
            if (text.trim().length < limits.min) { return "required"; }
            if (text.length > limits.max) { return "at most " + limits.max + " characters"; }
            if (CONTROL[limits.kind || "line"].test(text)) { return limits.kind === "multiline" ? "no control characters" : "one line, no control characters"; }
            if (limits.forbid) {
                for (var j = 0; j < limits.forbid.length; j++) {
                    // A secret's own character is not shown: the set is.
                    if (text.indexOf(limits.forbid[j]) >= 0) { return (limits.secret ? "none of " + limits.forbid : "no " + limits.forbid[j]) + (limits.forbidWhy ? " (" + limits.forbidWhy + ")" : ""); }
                }
            }
            if (limits.noOption && /(^|\s)-/.test(text)) { return "no word starting with a dash (a command line reads it as an option)"; }
            if (limits.pattern && !new RegExp(limits.pattern).test(text)) { return limits.patternText || "not in the expected form"; }
            return true;
        default:
            // Buffers, lists and objects come from msg.payload, not from the dialog.
            return true;
        }
    }

    /**
     * Whether the dialog can give this parameter: a Buffer or an object comes from msg.payload,
     * and so does a secret (a password parameter), which a flow file must never hold.
     */
    function editable(limits) {
        return !limits.secret && ["int", "number", "oneOf", "bool", "dateTime", "idList", "text"].indexOf(limits.type) >= 0;
    }

    function hint(limits) {
        switch (limits.type) {
        case "int": case "number": return limits.min + " to " + limits.max;
        case "oneOf": return limits.values.join(" | ");
        case "dateTime": return "YYYY-MM-DD HH:MM:SS";
        case "idList": return "e.g. 1,2";
        case "text": return limits.secret ? "secret" : "text, at most " + limits.max;
        default: return "";
        }
    }

    /** A field's placeholder: its range or form, then its default (a long one only named), or that it may be left blank. */
    function placeholder(limits) {
        var text = hint(limits);
        if (limits.default !== undefined) {
            var value = String(limits.default);
            return text + "; " + (value.length <= 16 ? "default " + value : "blank: the default text");
        }
        return text + (limits.optional ? " (optional)" : "");
    }

    /**
     * Builds the parameter rows of `operation` (its rules entry) into `container`, filled from
     * `values`; returns { read(): stored params, valid(): boolean } and marks bad values.
     */
    function operationForm(container, operation, values) {
        container.empty();
        var inputs = {};
        var fields = (operation && operation.params && operation.params.fields) || {};
        var names = Object.keys(fields);
        if (names.length === 0) {
            $("<div class='form-tips'></div>").text("This operation takes no parameters.").appendTo(container);
        }
        names.forEach(function (name) {
            var limits = fields[name];
            var row = $("<div class='form-row ipcam-param-row'></div>").appendTo(container);
            // The plain label; the key (the msg.payload field of the same name) when pointed at.
            $("<label></label>").attr({ for: "ipcam-param-" + name, title: "msg.payload." + name }).text(limits.label || name).appendTo(row);
            // The space a template's line break leaves between label and field: the rows line up with the others.
            row.append(" ");
            if (!editable(limits)) {
                $("<span class='ipcam-param-from-msg'></span>").text("from msg.payload." + name + (limits.secret ? " (a secret: never kept in the flow)" : "") + (limits.optional ? " (optional)" : "")).appendTo(row);
                return;
            }
            var input;
            var value = values && values[name] !== undefined ? values[name] : "";
            if (limits.type === "oneOf" || limits.type === "bool") {
                input = $("<select></select>").attr("id", "ipcam-param-" + name).css("width", "70%");
                var options = limits.type === "bool" ? ["true", "false"] : limits.values;
                $("<option></option>").val("").text(limits.optional ? (limits.default !== undefined ? "default (" + limits.default + ")" : "not set") : "choose...").appendTo(input);
                options.forEach(function (v) { $("<option></option>").val(v).text(v).appendTo(input); });
                input.val(String(value));
            } else {
                input = $("<input>").attr({ id: "ipcam-param-" + name, type: limits.secret ? "password" : "text", autocomplete: "off" }).css("width", "70%");
                input.attr("placeholder", placeholder(limits));
                input.val(String(value));
            }
            input.appendTo(row);
            input.on("change keyup input", function () { mark(name); });
            inputs[name] = input;
            mark(name);
        });

        function mark(name) {
            var result = check(fields[name], inputs[name].val());
            inputs[name].toggleClass("input-error", result !== true);
            // A long default does not fit the placeholder: the tooltip gives it whole.
            var limits = fields[name];
            inputs[name].attr("title", result !== true ? result : (limits.default !== undefined ? "default: " + limits.default : ""));
            return result === true;
        }

        return {
            read: function () {
                var out = {};
                Object.keys(inputs).forEach(function (name) {
                    var v = inputs[name].val();
                    if (!blank(v)) { out[name] = v; }
                });
                return out;
            },
            valid: function () {
                return Object.keys(inputs).every(mark);
            }
        };
    }

    /**
     * The fields of the settings that a node from an older flow or an example lacks show each
     * setting's default (the `value` of its `defaults`, what the runtime takes when it is absent),
     * never a blank choice, and Done saves it. First in `oneditprepare`: what follows reads them.
     */
    function showDefaults(node) {
        var defaults = (node._def && node._def.defaults) || {};
        var prefix = node._def && node._def.category === "config" ? "#node-config-input-" : "#node-input-";
        Object.keys(defaults).forEach(function (name) {
            var d = defaults[name];
            if (d.type || d.value === undefined || d.value === null || typeof d.value === "object") { return; }
            // A text field the runtime reads blank as a default (its rules give one) names that
            // default, whether the setting is absent or was emptied.
            var limits = setting(node.type, name);
            var $text = $(prefix + name).filter("input[type=text]");
            if ($text.length && !$text.attr("placeholder") && limits && limits.default !== undefined) { $text.attr("placeholder", String(limits.default)); }
            if (node[name] !== undefined && node[name] !== null) { return; }
            var $select = $(prefix + name).filter("select");
            if ($select.length && $select.prop("selectedIndex") < 0) { $select.val(String(d.value)); }
            // A checkbox shows what the runtime does without the setting: its default.
            if (typeof d.value === "boolean") { $(prefix + name).filter("input[type=checkbox]").prop("checked", d.value); }
            // Any other field (a label, the size a hidden field keeps) shows the default itself,
            // unless its placeholder says blank is that default.
            var $input = $(prefix + name).filter("input[type=text], input[type=hidden]");
            if ($input.length && d.value !== "" && $input.val() === "" && !$input.attr("placeholder")) { $input.val(String(d.value)); }
        });
    }

    /** Whether stored `params` fit `operation` (for the node's validate: a red triangle otherwise). */
    function paramsValid(operation, params) {
        if (!operation) { return true; }
        var fields = (operation.params && operation.params.fields) || {};
        var stored = params || {};
        return Object.keys(stored).every(function (name) {
            return fields[name] !== undefined && (!editable(fields[name]) || check(fields[name], stored[name]) === true);
        });
    }

    /** The rules entry of an operation of `table` (`request` or `edgerecord`). */
    function operationRules(table, name) {
        var list = (window.IPCAM_RULES && window.IPCAM_RULES.operations[table]) || [];
        for (var i = 0; i < list.length; i++) { if (list[i].name === name) { return list[i]; } }
        return undefined;
    }

    /** The limits of a node's setting (`settings[type][name]` of the rules), if the rules name it. */
    function setting(type, name) {
        var nodes = window.IPCAM_RULES && window.IPCAM_RULES.settings;
        return nodes && nodes[type] ? nodes[type][name] : undefined;
    }

    /**
     * A `validate` function for a setting of `defaults`: the setting's limits from the rules, the
     * reason in the dialog's words. `applies(node)`, when given, says whether the setting is in use
     * (e.g. a relay's pulse only in pulse mode).
     */
    function validator(type, name, label, applies) {
        return function (value, opt) {
            if (applies && !applies(this)) { return true; }
            var limits = setting(type, name);
            if (!limits) { return true; }
            var result = check(limits, value);
            return result === true ? true : ((opt && opt.label) || label || name) + ": " + result;
        };
    }

    /**
     * Shows the outcome of a dialog button (Test connection, Send this server to the device) in
     * the theme's colours: Node-RED 5's dark theme has its own, so no colour is fixed here.
     */
    function showResult($result, prefix, kind, text) {
        var colour = kind === "error" ? "var(--red-ui-text-color-error)" : (kind === "ok" ? "var(--red-ui-text-color-success)" : "");
        $result.removeClass(prefix + "-ok " + prefix + "-error " + prefix + "-busy")
            .addClass(prefix + "-" + kind)
            .css("color", colour)
            .text(text);
    }

    /** Empties a result (a new setting makes the last outcome stale). */
    function clearResult($result, prefix) {
        $result.removeClass(prefix + "-ok " + prefix + "-error " + prefix + "-busy").css("color", "").text("");
    }

    /** The words a plate list type is shown with, its device name beside them. */
    var LIST_WORDS = { whiteList: "allow list", blackList: "block list", temporaryList: "temporary list", strangerList: "stranger list", unknown: "not on a list" };
    function listTypeLabel(type) {
        return LIST_WORDS[type] ? LIST_WORDS[type] + " (" + type + ")" : String(type);
    }

    /**
     * The classes of lib/ops (who may choose an operation), in the order the dialog groups them,
     * with the words the dialog shows. The class of each operation comes from the rules.
     */
    var CLASS_WORDS = {
        read: { group: "Read: changes nothing", says: "changes nothing, reveals no secret, makes the device connect nowhere" },
        change: { group: "Change: settings and uploads", says: "changes settings or state of the device (parameters, uploads, lens, audio)" },
        outbound: { group: "Outbound: the device connects out", says: "makes the device connect to a server the parameters name" },
        files: { group: "Files: the device's files", says: "reads files of the device" },
        destructive: { group: "Destructive: replaces or destroys", says: "replaces or destroys something on the device" }
    };
    var CLASS_ORDER = ["read", "change", "outbound", "files", "destructive"];

    /** An operation as the list shows it: its plain label, the key a flow and the help use beside it. */
    function optionText(op) {
        return op.label && op.label !== op.name ? op.label + " (" + op.name + ")" : op.name;
    }

    /** The plain label of operation `name` of `table`, for a node's label in the flow (the name if unknown). */
    function operationLabel(table, name) {
        var op = operationRules(table, name);
        return op && op.label ? op.label : name;
    }

    /** One line on the class of `op` for the dialog. */
    function classText(op) {
        var words = CLASS_WORDS[op.class];
        if (!words) { return ""; }
        return "Class " + op.class + ": " + words.says + "." + (op.class === "read"
            ? " A message may choose it when Operation is msg."
            : " It runs only because this setting names it: a message can never choose it.");
    }

    /**
     * The editor parts every node of an operation table shares (ipcam-request, ipcam-edgerecord):
     * the validators of `operation` and `params`, and the dialog that lists the operations and
     * builds the chosen one's parameter form. `options`: `msgOption` (text of the `msg` choice, or
     * none), `groupByClass` (optgroups by class, in CLASS_ORDER), `defaultOperation`, and the ids
     * of the `select`, `params`, `summary` and (optional) `destructive` and `classInfo` elements.
     */
    function operationEditor(table, options) {
        function rules(name) { return operationRules(table, name); }
        return {
            validateOperation: function (value) {
                return (Boolean(options.msgOption) && value === "msg") || rules(value) !== undefined || "Operation: choose one of the list";
            },
            validateParams: function (value) {
                var op = rules(this.operation);
                return !op || paramsValid(op, value) || "Parameters: a value does not fit this operation";
            },
            oneditprepare: function () {
                // eslint-disable-next-line @typescript-eslint/no-this-alias -- the node being edited, for the callbacks below
                var node = this;
                var select = $("#" + options.select);
                var list = (window.IPCAM_RULES && window.IPCAM_RULES.operations[table]) || [];
                select.empty();
                if (options.msgOption) { $("<option></option>").val("msg").text(options.msgOption).appendTo(select); }
                var groups = {};
                if (options.groupByClass) {
                    CLASS_ORDER.forEach(function (cls) {
                        if (list.some(function (op) { return op.class === cls; })) {
                            groups[cls] = $("<optgroup></optgroup>").attr("label", CLASS_WORDS[cls].group).appendTo(select);
                        }
                    });
                }
                list.forEach(function (op) {
                    var parent = (options.groupByClass && groups[op.class]) || select;
                    $("<option></option>").val(op.name).text(optionText(op)).attr("title", op.summary).appendTo(parent);
                });
                select.val(node.operation || options.defaultOperation);
                var form;
                function show() {
                    var op = rules(select.val());
                    $("#" + options.summary).text(op ? op.summary : (options.msgSummary || ""));
                    if (options.destructive) { $("#" + options.destructive).toggle(Boolean(op && op.destructive)); }
                    if (options.classInfo) { $("#" + options.classInfo).text(op ? classText(op) : (options.msgClassText || "")); }
                    form = op ? operationForm($("#" + options.params), op, select.val() === node.operation ? node.params : {}) : undefined;
                    if (!op) { $("#" + options.params).empty(); }
                }
                select.on("change", show);
                show();
                showDefaults(node);
                node._ipcamForm = function () { return form; };
            },
            oneditsave: function () {
                var form = this._ipcamForm && this._ipcamForm();
                this.params = form ? form.read() : {};
                delete this._ipcamForm;
            },
            oneditcancel: function () {
                delete this._ipcamForm;
            }
        };
    }

    /** `base` with `def`'s own entries after it: a saved flow lists a node's settings in this order. */
    function extend(base, def) {
        Object.keys(def || {}).forEach(function (key) { base[key] = def[key]; });
        return base;
    }

    function italicIfNamed() {
        return this.name ? "node_label_italic" : "";
    }

    /**
     * The definition the nodes of an operation table share (ipcam-request, ipcam-edgerecord): a
     * device, the operation (new nodes: `options.defaultOperation`) with its parameters, Overrides,
     * and the dialog of operationEditor(table, options). `def` gives the node's palette words, icon
     * and label.
     */
    function operationNode(table, options, def) {
        var type = "ipcam-" + table;
        var editor = operationEditor(table, options);
        return extend({
            category: "ipcam",
            color: "#9fb8cf",
            defaults: {
                name: { value: "" },
                device: { value: "", type: "ipcam-device", required: false, label: "Device" },
                operation: { value: options.defaultOperation, required: true, label: "Operation", validate: editor.validateOperation },
                params: { value: {}, label: "Parameters", validate: editor.validateParams },
                overrides: { value: "payload", required: false, label: "Overrides", validate: validator(type, "overrides", "Overrides") }
            },
            inputs: 1,
            outputs: 1,
            labelStyle: italicIfNamed,
            oneditprepare: editor.oneditprepare,
            oneditsave: editor.oneditsave,
            oneditcancel: editor.oneditcancel
        }, def);
    }

    /**
     * The definition the plate nodes (ipcam-plate-add, -delete, -modify, -query, -sync) share: a
     * camera and the plate group it works on, one input and one output. `def` gives the node's
     * palette words and may add settings (`defaults`, after name, device and group) and any other
     * entry (an icon, a label, oneditprepare).
     */
    function plateNode(type, def) {
        var defaults = extend({
            name: { value: "" },
            device: { value: "", type: "ipcam-device", required: false, label: "Device" },
            group: { value: "1", required: true, label: "Group", validate: validator(type, "group", "Group") }
        }, def.defaults);
        return extend(extend({
            category: "ipcam",
            color: "#9fb8cf",
            inputs: 1,
            outputs: 1,
            icon: "font-awesome/fa-car",
            label: function () { return this.name || def.paletteLabel; },
            labelStyle: italicIfNamed
        }, def), {
            defaults: defaults,
            // A node of an older flow opens each setting it lacks at its default (the dry run of a
            // plate sync); then the dialog's own preparation, if it has one.
            oneditprepare: function () {
                showDefaults(this);
                if (def.oneditprepare) { def.oneditprepare.call(this); }
            }
        });
    }

    /**
     * The definition the Dashboard 2 widgets (ipcam-ui-camera, ipcam-ui-plates) share: a place in
     * a dashboard group with a size and a label shown above it (their defaults, the runtime's too,
     * from the rules), one input and one output. `def` gives the widget's palette words, its
     * settings (`defaults`, after the layout ones) and its own `oneditprepare`, which runs after
     * the size picker is set up.
     */
    function widgetNode(type, def) {
        var layout = (window.IPCAM_RULES && window.IPCAM_RULES.widgets && window.IPCAM_RULES.widgets[type]) || {};
        var defaults = extend({
            name: { value: "" },
            group: { type: "ui-group", required: true, label: "Group" },
            order: { value: 0 },
            width: { value: layout.width, validate: groupWidthValid },
            height: { value: layout.height },
            label: { value: layout.label }
        }, def.defaults);
        return extend(extend({
            category: "dashboard 2",
            color: "rgb(63, 173, 181)",
            inputs: 1,
            outputs: 1,
            icon: "ipcam.svg",
            label: function () { return this.name || this.label || def.paletteLabel; }
        }, def), {
            defaults: defaults,
            // A widget of an older or hand-written flow opens each setting it lacks at its default
            // (the size first: the size picker reads it).
            oneditprepare: function () {
                showDefaults(this);
                widgetSizer();
                if (def.oneditprepare) { def.oneditprepare.call(this); }
            }
        });
    }

    // Dashboard 2 widgets: a width no wider than the chosen group (the open dialog's, else the stored one).
    function groupWidthValid(v) {
        var group = RED.nodes.node($("#node-input-group").val() || this.group);
        return !group || !group.width || +(v || 0) <= +group.width;
    }

    // Dashboard 2 widgets: its size picker where Dashboard 2 is installed, else no size row.
    function widgetSizer() {
        if ($.fn.elementSizer) {
            $("#node-input-size").elementSizer({ width: "#node-input-width", height: "#node-input-height", group: "#node-input-group" });
        } else {
            $("#node-input-size").closest(".form-row").hide();
        }
    }

    window.IPCAM_EDITOR = {
        groupWidthValid: groupWidthValid,
        widgetSizer: widgetSizer,
        plateNode: plateNode,
        widgetNode: widgetNode,
        operationNode: operationNode,
        check: check,
        editable: editable,
        operationForm: operationForm,
        paramsValid: paramsValid,
        operationRules: operationRules,
        operationLabel: operationLabel,
        classText: classText,
        setting: setting,
        showDefaults: showDefaults,
        validator: validator,
        showResult: showResult,
        clearResult: clearResult,
        listTypeLabel: listTypeLabel
    };
})();
