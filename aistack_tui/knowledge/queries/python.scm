; Definitions: @def.<kind> on the whole node, @name on its identifier.
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function

; References: every name used in a call, attribute access or type position.
(call function: (identifier) @ref)
(attribute attribute: (identifier) @ref)
(argument_list (identifier) @ref)
(argument_list (keyword_argument value: (identifier) @ref))
(type (identifier) @ref)
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @ref)))
(decorator (identifier) @ref)
(import_from_statement name: (dotted_name (identifier) @ref))
(assignment right: (identifier) @ref)
(return_statement (identifier) @ref)
